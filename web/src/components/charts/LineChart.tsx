import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartProps } from './Chart';

const colors = ['#1d4ed8', '#b45309', '#15803d', '#7e22ce', '#be123c'];
const height = 160;
/** Room for the y axis: its longest label (about 7 px a character at uPlot's 12 px font) and the ticks. */
const labelRoom = (_u: uPlot, labels: string[] | null) => Math.max(40, 18 + 7 * Math.max(0, ...(labels ?? []).map((l) => l.length)));
const halfStep = (x: number[]) => (x.length > 1 ? (x[1] - x[0]) / 2 : 43_200);

/** uPlot on a canvas, as wide as its frame; loaded with the first chart of a page (see Chart). */
export default function LineChart({ x, series, timeZone, bars, format, formatTick }: ChartProps) {
  const frame = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const value = (_: uPlot, v: number | null) => (v === null ? '—' : format(v));
    const plot = new uPlot(
      {
        width: element.clientWidth || 300,
        height,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
        legend: { show: series.length > 1 },
        cursor: { y: false },
        scales: {
          // Bars need half a step of room at either end, or the first and last are cut in half.
          x: bars ? { time: true, range: (_u, min, max) => [min - halfStep(x), max + halfStep(x)] } : { time: true },
          y: { range: (_u, min, max) => [Math.min(0, min), max > min ? max : min + 1] },
        },
        axes: [
          { stroke: '#475569', values: (_u, ticks) => ticks.map(formatTick) },
          { stroke: '#475569', size: labelRoom, values: (u, vals) => vals.map((v) => value(u, v)) },
        ],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: colors[i % colors.length],
            width: 2,
            value,
            spanGaps: true,
            ...(bars
              ? { fill: `${colors[i % colors.length]}33`, paths: uPlot.paths.bars?.({ size: [0.7, 40] }), points: { show: false } }
              : {}),
          })),
        ],
      },
      [x, ...series.map((s) => s.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, timeZone, bars, format, formatTick]);
  return <div ref={frame} className="chart__canvas" />;
}
