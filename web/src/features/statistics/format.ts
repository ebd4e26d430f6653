import type { components } from '../../../../generated/openapi';
import { formatDuration } from '../../components/time';

export type StatisticFormat = components['schemas']['DailySeries']['format'];
export type Pillar = components['schemas']['StatisticPillar'];

const number = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 });

/** A statistic's value as its definition's `format` says (presentation only; null: no value). */
export function formatStatistic(value: number | null, format: StatisticFormat): string {
  if (value === null) return '—';
  switch (format) {
    case 'percent':
      return `${number.format(value * 100)} %`;
    case 'duration_minutes':
      return value >= 1 ? formatDuration(Math.round(value) * 60) : `${number.format(value)} min`;
    case 'time_of_day': {
      const minutes = Math.round(value) % 1440;
      return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
    }
    case 'rate_per_day':
      return `${number.format(value)} / day`;
    case 'number':
      return number.format(value);
  }
}

export const pillarNames = {
  ACTIVITY: 'Activity',
  COMMUNICATION: 'Communication',
  DELIVERY: 'Delivery',
  REVIEW: 'Review',
  KNOWLEDGE: 'Knowledge',
} satisfies Record<Pillar, string>;
