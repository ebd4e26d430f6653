import { $api } from '../../api/query';
import { QueryView } from '../../components/QueryView';
import { addDays } from '../../components/time';
import { DailyChart } from './DailyChart';
import { formatStatistic } from './format';

/** A worker's statistics over the last 30 days: a daily chart for each with events, the rest in one line. */
export function WorkerStatistics({ workerId, today }: { workerId: string; today: string }) {
  const daily = $api.useQuery('get', '/api/v1/console/statistics/daily', {
    params: { query: { workerId, from: addDays(today, -29), to: today } },
  });
  return (
    <QueryView
      query={daily}
      what="the statistics"
      isEmpty={(d) => d.items.length === 0}
      empty={<p className="muted">The organization has no statistic yet.</p>}
    >
      {(d) => {
        const active = d.items.filter((s) => s.total.count > 0);
        const quiet = d.items.filter((s) => s.total.count === 0);
        return (
          <>
            <div className="charts">
              {active.map((s) => (
                <div key={s.statisticId} className="card">
                  <DailyChart series={s} label={`${s.label}: ${formatStatistic(s.total.value, s.format)} over 30 days`} />
                </div>
              ))}
            </div>
            {quiet.length > 0 && <p className="muted small">Nothing in these 30 days for {quiet.map((s) => s.label).join(', ')}.</p>}
          </>
        );
      }}
    </QueryView>
  );
}
