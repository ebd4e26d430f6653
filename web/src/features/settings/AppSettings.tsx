import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { $api, invalidate } from '../../api/query';
import { SaveOutcome } from '../../components/States';
import { QueryView } from '../../components/QueryView';
import { Keys } from './Keys';
import { Manifest } from './Manifest';

/** One app: its whitelist of event types, its keys and its statistic manifest. */
export function AppSettings({ appId }: { appId: string }) {
  const app = $api.useQuery('get', '/api/v1/console/apps/{appId}', { params: { path: { appId } } });
  return (
    <QueryView query={app} what="this app">
      {(data) => (
        <>
          <p className="breadcrumb">
            <Link href="/apps">Apps</Link> / {data.name}
          </p>
          <h2>
            {data.name} <span className="muted">{data.integrationId}</span>
          </h2>
          <div className="settings-grid">
            <Keys appId={appId} />
            <Whitelist key={data.allowedEventTypes.join('\n')} appId={appId} allowed={data.allowedEventTypes} />
          </div>
          <Manifest appId={appId} />
        </>
      )}
    </QueryView>
  );
}

function Whitelist({ appId, allowed }: { appId: string; allowed: string[] }) {
  const [text, setText] = useState(allowed.join('\n'));
  const save = $api.useMutation('put', '/api/v1/console/apps/{appId}/allowed-event-types', {
    onSuccess: () => invalidate(`/api/v1/console/apps`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const types = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
    save.mutate({ params: { path: { appId } }, body: { allowedEventTypes: types } });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="whitelist-title">
      <h3 id="whitelist-title">Allowed event types</h3>
      <label className="field">
        <span>One event type per line (at most 200)</span>
        <textarea rows={8} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      </label>
      <SaveOutcome mutation={save} />
      <button type="submit" className="button" disabled={save.isPending}>
        Save whitelist
      </button>
    </form>
  );
}
