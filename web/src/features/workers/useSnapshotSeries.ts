import { useMemo } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, cursorPages } from '../../api/query';

type Snapshot = components['schemas']['SnapshotHistoryItem'];

/** One numeric metric of one app's snapshot type over time, oldest first. */
export interface MetricSeries {
  key: string;
  app: components['schemas']['App'];
  snapshotType: string;
  metricId: string;
  label: string;
  unit?: components['schemas']['MetricUnit'];
  /** Unix seconds. */
  x: number[];
  values: number[];
}

export const seriesKey = (appId: string, snapshotType: string, metricId: string) => `${appId} ${snapshotType} ${metricId}`;

/** The worker's snapshot history (newest first, 100 a page) and a series per numeric metric of what is loaded. */
export function useSnapshotHistory(workerId: string) {
  const history = $api.useInfiniteQuery(
    'get',
    '/api/v1/console/workers/{workerId}/snapshots',
    { params: { path: { workerId }, query: { limit: 100 } } },
    cursorPages,
  );
  const snapshots = useMemo(() => history.data?.pages.flatMap((p) => p.items) ?? [], [history.data]);
  const series = useMemo(() => seriesOf(snapshots), [snapshots]);
  return { history, snapshots, series };
}

function seriesOf(snapshots: Snapshot[]): MetricSeries[] {
  const byKey = new Map<string, MetricSeries>();
  for (const snapshot of [...snapshots].reverse()) {
    const x = Date.parse(snapshot.timestamp) / 1000;
    for (const metric of snapshot.metrics) {
      if (typeof metric.value !== 'number') continue;
      const key = seriesKey(snapshot.app.id, snapshot.snapshotType, metric.id);
      let s = byKey.get(key);
      if (!s) {
        s = {
          key,
          app: snapshot.app,
          snapshotType: snapshot.snapshotType,
          metricId: metric.id,
          label: metric.label ?? metric.id,
          unit: metric.unit,
          x: [],
          values: [],
        };
        byKey.set(key, s);
      }
      // Two snapshots at one instant: the later received stands (uPlot needs increasing x).
      if (s.x.at(-1) === x) s.values[s.values.length - 1] = metric.value;
      else {
        s.x.push(x);
        s.values.push(metric.value);
      }
    }
  }
  return [...byKey.values()];
}
