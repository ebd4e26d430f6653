import type { components } from '../../../../generated/openapi';

export type Metric = components['schemas']['StripMetric'];
type Unit = components['schemas']['MetricUnit'];

const numberFormat = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });

/** How each unit of the contract reads after a value (a unit added to the contract breaks this type check). */
const unitSuffix = { count: '', minutes: ' min', ratio: '', percentage: ' %', score: '' } satisfies Record<Unit, string>;
/** The unit in words, for the label under a card's value. */
export const unitNames = { count: 'count', minutes: 'minutes', ratio: 'ratio', percentage: 'percent', score: 'score' } satisfies Record<
  Unit,
  string
>;

export function formatMetric(metric: Metric): string {
  if (typeof metric.value === 'string') return metric.value;
  return numberFormat.format(metric.value) + (metric.unit ? unitSuffix[metric.unit] : '');
}

/** A metric's value with its unit. */
export function MetricValue({ metric }: { metric: Metric }) {
  return <>{formatMetric(metric)}</>;
}
