import { Link, useSearchParams } from 'wouter';
import type { components } from '../../../../generated/openapi';
import { $api, pollMs } from '../../api/query';
import { QueryView } from '../../components/QueryView';
import { Empty, Loading } from '../../components/States';
import { addDays } from '../../components/time';
import { useTimeZone } from '../../components/useTimeZone';
import { useTitle } from '../../components/useTitle';
import { canAdminister, useSession } from '../auth/session';
import { DailyChart } from './DailyChart';
import { formatStatistic, pillarNames } from './format';
import { RangePicker, type DayRange } from './RangePicker';

type Summary = components['schemas']['SummaryReport'];
type Series = components['schemas']['DailySeries'];

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/** The organization's statistics over a range of days: the summary per pillar and SPACE dimension, a daily chart and the top workers per statistic. */
export default function StatisticsPage() {
  useTitle('Statistics');
  const { timeZone, today } = useTimeZone();
  const [params, setParams] = useSearchParams();
  if (!today) return <Loading />;
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const range: DayRange = datePattern.test(from) && datePattern.test(to) ? { from, to } : { from: addDays(today, -29), to: today };
  return (
    <>
      <div className="page-head">
        <h1>Statistics</h1>
        <span className="muted small">Days in {timeZone}</span>
      </div>
      <RangePicker
        key={`${range.from} ${range.to}`}
        range={range}
        today={today}
        onChange={(r) => setParams(new URLSearchParams({ ...r }))}
      />
      <SummarySection range={range} />
      <DailySection range={range} />
    </>
  );
}

function change(total: number | null, previous: number | null): string {
  if (total === null || previous === null) return '';
  if (previous === 0) return total === 0 ? 'no change' : 'new';
  const percent = Math.round(((total - previous) / Math.abs(previous)) * 100);
  return percent === 0 ? 'no change' : `${percent > 0 ? '+' : '−'}${Math.abs(percent)} %`;
}

function SummarySection({ range }: { range: DayRange }) {
  const summary = $api.useQuery(
    'get',
    '/api/v1/console/reports/summary',
    { params: { query: range } },
    { placeholderData: (previous) => previous, refetchInterval: pollMs },
  );
  return (
    <section className="section" aria-labelledby="summary-title">
      <h2 id="summary-title">Summary by pillar</h2>
      <QueryView query={summary} what="the summary" isEmpty={(s) => s.pillars.length === 0} empty={<NoStatistic />}>
        {(s) => <Summary summary={s} />}
      </QueryView>
    </section>
  );
}

function Summary({ summary }: { summary: Summary }) {
  const labels = new Map(summary.pillars.flatMap((p) => p.statistics.map((s) => [s.statisticId, s.label] as const)));
  return (
    <>
      <p className="muted small">
        Against the {summary.previous.from} to {summary.previous.to} range before.
      </p>
      <div className="charts">
        {summary.pillars.map((p) => (
          <section key={p.pillar} className="card" aria-labelledby={`pillar-${p.pillar}`}>
            <h3 id={`pillar-${p.pillar}`}>{pillarNames[p.pillar]}</h3>
            <ul className="plain list">
              {p.statistics.map((s) => (
                <li key={s.statisticId} className="summary-line">
                  <span>
                    {s.label} <span className="muted small">{s.app.name}</span>
                  </span>
                  <span className="summary-line__value">
                    <strong>{formatStatistic(s.total.value, s.format)}</strong>{' '}
                    <span className="muted small">
                      {change(s.total.value, s.previousTotal.value)} (before: {formatStatistic(s.previousTotal.value, s.format)})
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
      {summary.dimensions.length > 0 && (
        <>
          <h2 className="section">SPACE dimensions</h2>
          <ul className="dimensions">
            {summary.dimensions.map((d) => (
              <li key={d.dimension} className="card">
                <h3>{d.dimension}</h3>
                <p className="small">Fed by {d.statisticIds.map((id) => labels.get(id) ?? id).join(', ')}</p>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function NoStatistic() {
  const session = useSession();
  return (
    <Empty title="No statistic defined yet">
      <p>
        Statistics come from each app&apos;s manifest: which events count, and how.{' '}
        {canAdminister(session) ? (
          <>
            Write one under <Link href="/settings/apps">Developer settings, Apps</Link>.
          </>
        ) : (
          'An owner or admin writes them.'
        )}
      </p>
    </Empty>
  );
}

function DailySection({ range }: { range: DayRange }) {
  const daily = $api.useQuery(
    'get',
    '/api/v1/console/statistics/daily',
    { params: { query: range } },
    { placeholderData: (previous) => previous, refetchInterval: pollMs },
  );
  return (
    <section className="section" aria-labelledby="daily-title">
      <h2 id="daily-title">Per statistic, day by day</h2>
      <QueryView
        query={daily}
        what="the daily statistics"
        isEmpty={(d) => d.items.length === 0}
        empty={<p className="muted">No statistic yet.</p>}
      >
        {(d) => (
          <div className="charts">
            {d.items.map((series) => (
              <StatisticCard key={series.statisticId} series={series} range={range} />
            ))}
          </div>
        )}
      </QueryView>
    </section>
  );
}

function StatisticCard({ series, range }: { series: Series; range: DayRange }) {
  const headingId = `statistic-${series.statisticId.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <h3 id={headingId}>{series.label}</h3>
      <p className="muted small">
        {series.app.name} · {pillarNames[series.pillar]} · {series.aggregation}
        {series.status.state === 'recomputing' && ' · being recomputed'}
      </p>
      <p className="big" aria-label={`${series.label} over the range`}>
        {formatStatistic(series.total.value, series.format)}
      </p>
      <DailyChart series={series} caption="Per day" />
      <TopWorkers statisticId={series.statisticId} format={series.format} range={range} />
    </section>
  );
}

function TopWorkers({ statisticId, format, range }: { statisticId: string; format: Series['format']; range: DayRange }) {
  const top = $api.useQuery(
    'get',
    '/api/v1/console/statistics/daily',
    {
      params: { query: { ...range, statisticId: [statisticId], groupBy: 'worker', limit: 5 } },
    },
    { refetchInterval: pollMs },
  );
  return (
    <>
      <h4 className="top__title">Top workers</h4>
      <QueryView
        query={top}
        what="the top workers"
        isEmpty={(t) => t.items.length === 0}
        empty={<p className="muted small">No worker in this range.</p>}
      >
        {(t) => (
          <ol className="top">
            {t.items.map((item) =>
              item.worker ? (
                <li key={item.worker.id}>
                  <Link href={`/workers/${item.worker.id}`}>{item.worker.displayName}</Link>{' '}
                  <span>{formatStatistic(item.total.value, format)}</span>
                </li>
              ) : null,
            )}
          </ol>
        )}
      </QueryView>
    </>
  );
}
