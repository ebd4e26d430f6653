import { useCallback, useMemo } from 'react';
import type { components } from '../../../../generated/openapi';
import { Chart } from '../../components/charts/Chart';
import { formatDay } from '../../components/time';
import { formatStatistic } from './format';

type Series = components['schemas']['DailySeries'];

const dayTick = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' });

/**
 * A statistic's value per day, as bars. The days are the organization's already: each is placed at
 * its UTC midnight and read back in UTC, so no time zone moves a bar to the next day.
 */
export function DailyChart({ series, label, caption }: { series: Series; label?: string; caption?: string }) {
  const x = useMemo(() => series.days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000), [series.days]);
  const values = useMemo(() => [{ label: series.label, values: series.days.map((d) => d.value) }], [series]);
  const format = useCallback((v: number) => formatStatistic(v, series.format), [series.format]);
  const formatTick = useCallback((s: number) => dayTick.format(new Date(s * 1000)), []);
  return (
    <Chart
      label={label ?? series.label}
      caption={caption}
      xLabel="Day"
      formatX={(s) => formatDay(new Date(s * 1000).toISOString().slice(0, 10))}
      x={x}
      series={values}
      timeZone="UTC"
      bars
      format={format}
      formatTick={formatTick}
    />
  );
}
