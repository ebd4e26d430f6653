import { useState, type FormEvent } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, invalidate } from '../../api/query';
import { Empty, RequestFailure } from '../../components/States';
import { DataTable, QueryView, actionsColumn } from '../../components/QueryView';
import { formatDateTime } from '../../components/time';
import { useTimeZone } from '../../components/useTimeZone';
import { CopyButton } from '../../components/CopyButton';

type Issued = components['schemas']['IssuedApiKey'];

function keyState(key: components['schemas']['ApiKeySummary']): string {
  if (key.revokedAt) return 'Revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return 'Expired';
  return 'Active';
}

/** The app's keys: issue one (shown once, with a copy button), see expiry and last use, revoke. */
export function Keys({ appId }: { appId: string }) {
  const { timeZone } = useTimeZone();
  const keys = $api.useQuery('get', '/api/v1/console/apps/{appId}/keys', { params: { path: { appId } } });
  const [expiresAt, setExpiresAt] = useState('');
  const [issued, setIssued] = useState<Issued>();
  const issue = $api.useMutation('post', '/api/v1/console/apps/{appId}/keys', {
    onSuccess: (key) => {
      setIssued(key);
      setExpiresAt('');
      return invalidate(`/api/v1/console/apps/{appId}/keys`);
    },
  });
  const revoke = $api.useMutation('post', '/api/v1/console/apps/{appId}/keys/{keyId}/revoke', {
    onSuccess: () => invalidate(`/api/v1/console/apps/{appId}/keys`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setIssued(undefined);
    issue.mutate({ params: { path: { appId } }, body: expiresAt ? { expiresAt: new Date(expiresAt).toISOString() } : {} });
  };

  return (
    <section className="card" aria-labelledby="keys-title">
      <h3 id="keys-title">API keys</h3>
      {issued && (
        <div className="secret" role="region" aria-labelledby="issued-title">
          <h4 id="issued-title">New key: copy it now, it is shown only once</h4>
          <label className="field">
            <span>Key</span>
            <input readOnly value={issued.key} onFocus={(e) => e.target.select()} className="mono" />
          </label>
          <CopyButton text={issued.key} label="Copy key" />
          <button type="button" className="link-button" onClick={() => setIssued(undefined)}>
            I have stored it
          </button>
        </div>
      )}
      <QueryView
        query={keys}
        what="the keys"
        isEmpty={(data) => data.items.length === 0}
        empty={<Empty title="No key yet">Issue a key for this app to send events with it.</Empty>}
      >
        {(data) => (
          <DataTable caption="Keys of this app" columns={['Key', 'State', 'Created', 'Expires', 'Last used', actionsColumn]}>
            {data.items.map((key) => (
              <tr key={key.id}>
                <td className="mono">{key.prefix}…</td>
                <td>{keyState(key)}</td>
                <td>{formatDateTime(key.createdAt, timeZone)}</td>
                <td>{key.expiresAt ? formatDateTime(key.expiresAt, timeZone) : 'Never'}</td>
                <td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt, timeZone) : 'Never'}</td>
                <td>
                  {!key.revokedAt && (
                    <button
                      type="button"
                      className="button button--danger"
                      aria-label={`Revoke ${key.prefix}`}
                      disabled={revoke.isPending}
                      onClick={() => {
                        if (window.confirm(`Revoke ${key.prefix}…? Requests with it stop being accepted.`))
                          revoke.mutate({ params: { path: { appId, keyId: key.id } } });
                      }}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
      <RequestFailure failure={revoke.error} />
      <form onSubmit={submit} className="inline-form" aria-label="Issue a key">
        <label className="field">
          <span>Expires (optional)</span>
          <input type="datetime-local" value={expiresAt} onChange={(e) => setExpiresAt(e.target.value)} />
        </label>
        <button type="submit" className="button" disabled={issue.isPending}>
          Issue a key
        </button>
      </form>
      <RequestFailure failure={issue.error} />
    </section>
  );
}
