import { lazy, Suspense } from 'react';

export interface ChartProps {
  /** Unix seconds. */
  x: number[];
  series: Array<{ label: string; values: Array<number | null> }>;
  timeZone: string;
  /** Bars (one per day) rather than a line. */
  bars?: boolean;
  format: (value: number) => string;
  /** A tick of the time axis (unix seconds), in the organization's time zone. */
  formatTick: (x: number) => string;
}

// uPlot (and its stylesheet) load with the first chart, not with the console's first page.
const LineChart = lazy(() => import('./LineChart'));

/**
 * A small chart: a canvas, which a screen reader cannot read, so it is an image named by `label`,
 * and the same figures follow in a table that only screen readers see.
 */
export function Chart({
  label,
  caption = label,
  xLabel,
  formatX,
  ...props
}: ChartProps & {
  label: string;
  /** The visible title, when the card around says what the chart is already (default: `label`). */
  caption?: string;
  xLabel: string;
  formatX: (x: number) => string;
}) {
  return (
    <figure className="chart">
      <figcaption className="chart__title">{caption}</figcaption>
      <div role="img" aria-label={`Chart of ${label}: ${props.x.length} points; the figures follow in a table`}>
        <Suspense fallback={<div className="chart__canvas" />}>
          <LineChart {...props} />
        </Suspense>
      </div>
      <div className="visually-hidden">
        <table>
          <caption>{label}</caption>
          <thead>
            <tr>
              <th scope="col">{xLabel}</th>
              {props.series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.x.map((x, i) => (
              <tr key={x}>
                <th scope="row">{formatX(x)}</th>
                {props.series.map((s) => (
                  <td key={s.label}>{s.values[i] === null ? '—' : props.format(s.values[i])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
