import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { $api, invalidate } from '../../api/query';
import { Empty, RequestFailure } from '../../components/States';
import { QueryView } from '../../components/QueryView';

/** The organization's apps, and a form for a new one. */
export function AppsSettings() {
  const apps = $api.useQuery('get', '/api/v1/console/apps', {});
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const create = $api.useMutation('post', '/api/v1/console/apps', {
    onSuccess: () => {
      setSlug('');
      setName('');
      return invalidate('/api/v1/console/apps');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ body: { slug, name } });
  };
  return (
    <div className="settings-grid">
      <section className="card" aria-labelledby="apps-title">
        <h2 id="apps-title">Apps</h2>
        <QueryView
          query={apps}
          what="the apps"
          isEmpty={(data) => data.items.length === 0}
          empty={<Empty title="No app yet">An app is one of your systems that sends events: create it here, then issue it a key.</Empty>}
        >
          {(data) => (
            <ul className="plain list">
              {data.items.map((app) => (
                <li key={app.id}>
                  <Link href={`/apps/${app.id}`}>{app.name}</Link> <span className="muted">{app.integrationId}</span>{' '}
                  <span className="muted small">{app.allowedEventTypes.length} event types allowed</span>
                </li>
              ))}
            </ul>
          )}
        </QueryView>
      </section>
      <form className="card" onSubmit={submit} aria-labelledby="new-app-title">
        <h2 id="new-app-title">New app</h2>
        <label className="field">
          <span>Slug</span>
          <input
            value={slug}
            required
            pattern="[a-z][a-z0-9\-]{1,39}"
            onChange={(e) => setSlug(e.target.value)}
            aria-describedby="slug-help"
          />
          <small id="slug-help">2 to 40 characters: lowercase letters, digits and hyphens, starting with a letter.</small>
        </label>
        <label className="field">
          <span>Name</span>
          <input value={name} required maxLength={200} onChange={(e) => setName(e.target.value)} />
        </label>
        <RequestFailure failure={create.error} />
        <button type="submit" className="button" disabled={create.isPending}>
          Create app
        </button>
      </form>
    </div>
  );
}
