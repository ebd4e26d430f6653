import { $api, cursorPages } from '../../api/query';
import { Empty } from '../../components/States';
import { DataTable, MoreButton, QueryView } from '../../components/QueryView';
import { formatDateTime } from '../../components/time';
import { useTimeZone } from '../../components/useTimeZone';

/** Who changed what, when: newest first, a page at a time. */
export function AuditLog() {
  const { timeZone } = useTimeZone();
  const log = $api.useInfiniteQuery('get', '/api/v1/console/audit-log', { params: { query: { limit: 50 } } }, cursorPages);
  return (
    <section className="card" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <QueryView
        query={log}
        what="the audit log"
        isEmpty={(data) => data.pages[0].items.length === 0}
        empty={<Empty title="Nothing changed yet">Changes to apps, keys, manifests, members and settings show here.</Empty>}
      >
        {(data) => (
          <DataTable caption="Changes to the organization, newest first" columns={['When', 'Who', 'What', 'Target', 'Details']}>
            {data.pages
              .flatMap((p) => p.items)
              .map((e) => (
                <tr key={e.id}>
                  <td>{formatDateTime(e.at, timeZone)}</td>
                  <td>{e.actor.email ?? (e.actor.kind === 'api_key' ? `key ${e.actor.keyId ?? ''}` : e.actor.kind)}</td>
                  <td>{e.action}</td>
                  <td className="mono small">
                    {e.target.type} {e.target.id}
                  </td>
                  <td className="mono small">{e.details ? JSON.stringify(e.details) : ''}</td>
                </tr>
              ))}
          </DataTable>
        )}
      </QueryView>
      <MoreButton query={log} label="Older entries" />
    </section>
  );
}
