import type { components } from '../../../../generated/openapi';
import { Sparkline } from '../../components/charts/Sparkline';
import { formatDateTime } from '../../components/time';
import { formatMetric, unitNames } from './MetricValue';
import { seriesKey, type MetricSeries } from './useSnapshotSeries';

/** The user strip: a card per app with its current snapshot's first four metrics, in the order sent. */
export function UserStrip({
  cards,
  series,
  timeZone,
}: {
  cards: components['schemas']['StripCard'][];
  series: Map<string, MetricSeries>;
  timeZone: string;
}) {
  return (
    <ul className="strip" aria-label="User strip">
      {cards.map((card) => (
        <li key={card.app.id} className="card strip__card">
          <h3>{card.app.name}</h3>
          <p className="muted small">
            {card.snapshotType} · {formatDateTime(card.timestamp, timeZone)}
          </p>
          <dl className="metrics">
            {card.metrics.map((metric) => {
              const trend = series.get(seriesKey(card.app.id, card.snapshotType, metric.id));
              const label = metric.label ?? metric.id;
              return (
                <div key={metric.id} className="metric">
                  <dt>{label}</dt>
                  <dd>
                    <span className="metric__value">{formatMetric(metric)}</span>
                    {trend && (
                      <Sparkline
                        values={trend.values.slice(-30)}
                        label={`${label}: the last ${Math.min(30, trend.values.length)} snapshots`}
                      />
                    )}
                  </dd>
                  {metric.unit && <dd className="metric__unit">{unitNames[metric.unit]}</dd>}
                </div>
              );
            })}
          </dl>
        </li>
      ))}
    </ul>
  );
}
