import { useState, type FormEvent } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, invalidate } from '../../api/query';
import { failureMessage, FormProblem } from '../../components/States';
import { QueryView } from '../../components/QueryView';

type ManifestBody = components['schemas']['StatisticsPutRequest'];

/** The app's statistic manifest as JSON; the server's error names what is wrong. */
export function Manifest({ appId }: { appId: string }) {
  const manifest = $api.useQuery('get', '/api/v1/console/apps/{appId}/statistics', { params: { path: { appId } } });
  return (
    <QueryView query={manifest} what="the manifest">
      {(data) => (
        <ManifestEditor key={JSON.stringify(data)} appId={appId} initial={JSON.stringify({ statistics: data.statistics }, null, 2)} />
      )}
    </QueryView>
  );
}

function ManifestEditor({ appId, initial }: { appId: string; initial: string }) {
  const [text, setText] = useState(initial);
  const [syntax, setSyntax] = useState<string>();
  const save = $api.useMutation('put', '/api/v1/console/apps/{appId}/statistics', {
    onSuccess: () => invalidate('/api/v1/console/apps', '/api/v1/console/statistics', '/api/v1/console/reports'),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let body: ManifestBody;
    try {
      body = JSON.parse(text);
    } catch (error) {
      setSyntax(`Not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    setSyntax(undefined);
    save.mutate({ params: { path: { appId } }, body });
  };
  const problem = syntax ?? (save.isError ? failureMessage(save.error) : undefined);
  return (
    <form className="card section" onSubmit={submit} aria-labelledby="manifest-title">
      <h3 id="manifest-title">Statistic manifest</h3>
      <label className="field">
        <span>Manifest (JSON, replaced whole on save)</span>
        <textarea
          className="mono"
          rows={16}
          value={text}
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
          aria-invalid={problem ? true : undefined}
        />
      </label>
      <FormProblem problem={problem} />
      {save.isSuccess && !problem && <p role="status">Saved. Past events are counted again under the new manifest.</p>}
      <button type="submit" className="button" disabled={save.isPending}>
        Save manifest
      </button>
    </form>
  );
}
