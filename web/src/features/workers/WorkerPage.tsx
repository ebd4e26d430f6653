import { useCallback, useMemo, useState } from 'react';
import { Link } from 'wouter';
import { $api } from '../../api/query';
import { Chart } from '../../components/charts/Chart';
import { DataTable, MoreButton, QueryView } from '../../components/QueryView';
import { Empty, Loading } from '../../components/States';
import { formatDateTime, formatTick } from '../../components/time';
import { useTimeZone } from '../../components/useTimeZone';
import { useTitle } from '../../components/useTitle';
import { WorkerStatistics } from '../statistics/WorkerStatistics';
import { DayPicker } from '../timeline/DayPicker';
import { DayTimeline } from '../timeline/DayTimeline';
import { formatMetric } from './MetricValue';
import { UserStrip } from './UserStrip';
import { useSnapshotHistory, type MetricSeries } from './useSnapshotSeries';

/** A worker: who they are, their user strip, their snapshot history, their statistics and their timeline. */
export default function WorkerPage({ workerId }: { workerId: string }) {
  const worker = $api.useQuery('get', '/api/v1/console/workers/{workerId}', { params: { path: { workerId } } });
  const { timeZone, today } = useTimeZone();
  const { history, snapshots, series } = useSnapshotHistory(workerId);
  const seriesByKey = useMemo(() => new Map(series.map((s) => [s.key, s])), [series]);
  useTitle(worker.data?.displayName ?? 'Worker');
  return (
    <>
      <p className="breadcrumb">
        <Link href="/">Timeline</Link> / Worker
      </p>
      <QueryView query={worker} what="this worker">
        {(w) => (
          <>
            <div className="page-head">
              <h1>{w.displayName}</h1>
              {w.email && <span className="muted">{w.email}</span>}
            </div>
            <p className="muted small">
              Known to {w.connections.join(', ') || 'no app yet'}
              {w.externalIds.length > 0 && ` · ids: ${w.externalIds.map((e) => `${e.externalId} (${e.app.slug})`).join(', ')}`} · first seen{' '}
              {formatDateTime(w.createdAt, timeZone)}
            </p>
            <section className="section" aria-labelledby="strip-title">
              <h2 id="strip-title">User strip</h2>
              {w.strip.length ? (
                <UserStrip cards={w.strip} series={seriesByKey} timeZone={timeZone} />
              ) : (
                <Empty title="No snapshot yet">
                  An app that sends a snapshot for this worker gets a card here, with its first four metrics.
                </Empty>
              )}
            </section>
          </>
        )}
      </QueryView>
      <section className="section" aria-labelledby="history-title">
        <h2 id="history-title">Snapshot history</h2>
        <QueryView
          query={history}
          what="the snapshot history"
          isEmpty={() => snapshots.length === 0}
          empty={<p className="muted">No snapshot received.</p>}
        >
          {() => (
            <>
              <SeriesCharts series={series} timeZone={timeZone} />
              <h3 className="section">Latest snapshots</h3>
              <DataTable caption="Snapshots of this worker, newest first" columns={['Time', 'App', 'Type', 'Metrics']}>
                {snapshots.slice(0, 20).map((s) => (
                  <tr key={s.id}>
                    <td>{formatDateTime(s.timestamp, timeZone)}</td>
                    <td>{s.app.name}</td>
                    <td>{s.snapshotType}</td>
                    <td className="small">{s.metrics.map((m) => `${m.label ?? m.id}: ${formatMetric(m)}`).join(' · ')}</td>
                  </tr>
                ))}
              </DataTable>
              <MoreButton query={history} label="Older snapshots (for the charts)" />
            </>
          )}
        </QueryView>
      </section>
      <section className="section" aria-labelledby="worker-statistics-title">
        <h2 id="worker-statistics-title">Statistics, last 30 days</h2>
        {today ? <WorkerStatistics workerId={workerId} today={today} /> : <Loading />}
      </section>
      <WorkerTimeline workerId={workerId} timeZone={timeZone} today={today} />
    </>
  );
}

/** A small chart per numeric metric, per app and snapshot type. */
function SeriesCharts({ series, timeZone }: { series: MetricSeries[]; timeZone: string }) {
  const charted = series.filter((s) => s.x.length > 1);
  if (!charted.length) return null;
  return (
    <div className="charts">
      {charted.map((s) => (
        <MetricChart key={s.key} series={s} timeZone={timeZone} />
      ))}
    </div>
  );
}

function MetricChart({ series: s, timeZone }: { series: MetricSeries; timeZone: string }) {
  const chartSeries = useMemo(() => [{ label: s.label, values: s.values }], [s]);
  const formatX = useCallback((x: number) => formatTick(x, timeZone), [timeZone]);
  const format = useCallback((v: number) => formatMetric({ id: s.metricId, value: v, unit: s.unit }), [s]);
  return (
    <div className="card">
      <Chart
        label={`${s.label} (${s.app.name}, ${s.snapshotType})`}
        xLabel="Time"
        formatX={(x) => formatDateTime(new Date(x * 1000).toISOString(), timeZone)}
        x={s.x}
        series={chartSeries}
        timeZone={timeZone}
        format={format}
        formatTick={formatX}
      />
    </div>
  );
}

function WorkerTimeline({ workerId, timeZone, today }: { workerId: string; timeZone: string; today: string | undefined }) {
  const [chosen, setDay] = useState<string>();
  const day = chosen ?? today;
  const filters = useMemo(() => ({ workerId }), [workerId]);
  return (
    <section className="section" aria-labelledby="worker-timeline-title">
      <h2 id="worker-timeline-title">Timeline</h2>
      {day === undefined || today === undefined ? (
        <Loading />
      ) : (
        <>
          <DayPicker day={day} today={today} onChange={setDay} />
          <DayTimeline key={day} day={day} timeZone={timeZone} filters={filters} headings={false} />
        </>
      )}
    </section>
  );
}
