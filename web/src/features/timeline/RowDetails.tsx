import { useEffect, useRef, type ReactNode } from 'react';
import { Link } from 'wouter';
import { formatDateTime, formatDuration } from '../../components/time';
import { categoryLabels, isCategory, rowType, type TimelineRow } from './rows';
import { MetricValue } from '../workers/MetricValue';

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A row's details and metadata, in a modal dialog (the native one: focus is kept in it, Escape closes). */
export function RowDetails({ row, timeZone, onClose }: { row: TimelineRow; timeZone: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="row-title" onClose={onClose}>
      <div className="dialog__head">
        <h2 id="row-title">{rowType(row)}</h2>
        <button type="button" className="button button--secondary" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
      <div className="dialog__body">
        <dl className="facts">
          <Fact term="Kind">{row.kind}</Fact>
          <Fact term="Worker">
            <Link href={`/workers/${row.worker.id}`}>{row.worker.displayName}</Link>
          </Fact>
          <Fact term="App">
            {row.app.name} <span className="muted">{row.integrationId}</span>
          </Fact>
          {row.category && <Fact term="Category">{isCategory(row.category) ? categoryLabels[row.category] : row.category}</Fact>}
          <Fact term="Time">{formatDateTime(row.timestamp, timeZone, true)}</Fact>
          <Fact term="Received">{formatDateTime(row.receivedAt, timeZone, true)}</Fact>
          {row.duration !== undefined && <Fact term="Duration">{formatDuration(row.duration)}</Fact>}
          {row.pillar && <Fact term="Pillar">{row.pillar}</Fact>}
          {row.statisticId && <Fact term="Statistic">{row.statisticId}</Fact>}
          <Fact term="Request">
            <span className="mono">{row.requestId}</span>
          </Fact>
        </dl>
        {row.metrics && (
          <>
            <h3>Metrics</h3>
            <dl className="facts">
              {row.metrics.map((m) => (
                <Fact key={m.id} term={m.label ?? m.id}>
                  <MetricValue metric={m} />
                </Fact>
              ))}
            </dl>
          </>
        )}
        <h3>Metadata</h3>
        {row.metadata && Object.keys(row.metadata).length ? (
          <pre className="json" tabIndex={0} aria-label="Metadata as JSON">
            {JSON.stringify(row.metadata, null, 2)}
          </pre>
        ) : (
          <p className="muted">None.</p>
        )}
      </div>
    </dialog>
  );
}
