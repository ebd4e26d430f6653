import { useState, type FormEvent } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, queryClient } from '../../api/query';
import { failureMessage, FormProblem } from '../../components/States';
import { categoryLabels, isCategory } from './rows';
import type { TimelineFilters } from './useTimeline';

type App = components['schemas']['App'];
type Worker = components['schemas']['WorkerListItem'];

const workerOption = (w: { displayName: string; email?: string }) => (w.email ? `${w.displayName} (${w.email})` : w.displayName);

/** The worker search: a prefix of a name, email or externalId, with the matches offered as you type. */
const workerSearch = (text: string) => ({ params: { query: { q: text.trim(), limit: 20 } } });
function useWorkerMatches(text: string): Worker[] {
  const matches = $api.useQuery('get', '/api/v1/console/workers', workerSearch(text), { enabled: text.trim().length > 0 });
  return matches.data?.items ?? [];
}

/** App, worker, event type and category: applied together, kept in the address (so a filtered day can be shared). */
export function Filters({
  filters,
  workerName,
  apps,
  onApply,
}: {
  filters: TimelineFilters;
  workerName: string;
  apps: App[];
  onApply: (filters: TimelineFilters) => void;
}) {
  const [appId, setAppId] = useState(filters.appId ?? '');
  const [worker, setWorker] = useState(workerName);
  const [eventType, setEventType] = useState(filters.eventType ?? '');
  const [category, setCategory] = useState<string>(filters.category ?? '');
  const [problem, setProblem] = useState('');
  const matches = useWorkerMatches(worker === workerName ? '' : worker);

  /** The worker the text names: a suggestion as offered, a display name, or the only match of a prefix. */
  const resolveWorker = async (text: string): Promise<{ id: string } | { problem: string }> => {
    const found = (await queryClient.fetchQuery($api.queryOptions('get', '/api/v1/console/workers', workerSearch(text)))).items;
    const exact = found.filter((w) => workerOption(w) === text || w.displayName === text);
    const chosen = exact.length === 1 ? exact[0] : found.length === 1 ? found[0] : undefined;
    if (chosen) return { id: chosen.id };
    return { problem: found.length ? 'Several workers match: choose one from the suggestions.' : 'No worker matches this name.' };
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const text = worker.trim();
    let workerId = text && worker === workerName ? filters.workerId : undefined;
    if (text && worker !== workerName) {
      const resolved = await resolveWorker(text).catch((error: unknown) => ({ problem: failureMessage(error) }));
      if ('problem' in resolved) return setProblem(resolved.problem);
      workerId = resolved.id;
    }
    setProblem('');
    onApply({
      appId: appId || undefined,
      workerId,
      eventType: eventType.trim() || undefined,
      category: isCategory(category) ? category : undefined,
    });
  };
  const clear = () => {
    setAppId('');
    setWorker('');
    setEventType('');
    setCategory('');
    setProblem('');
    onApply({});
  };

  return (
    <form className="filters" onSubmit={(e) => void submit(e)} aria-label="Filters">
      <label className="field">
        <span>App</span>
        <select value={appId} onChange={(e) => setAppId(e.target.value)}>
          <option value="">All apps</option>
          {apps.map((app) => (
            <option key={app.id} value={app.id}>
              {app.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Worker</span>
        <input type="search" list="worker-matches" value={worker} onChange={(e) => setWorker(e.target.value)} autoComplete="off" />
        <datalist id="worker-matches">
          {matches.map((w) => (
            <option key={w.id} value={workerOption(w)} />
          ))}
        </datalist>
      </label>
      <label className="field">
        <span>Event type</span>
        <input
          value={eventType}
          onChange={(e) => setEventType(e.target.value)}
          pattern="[A-Za-z0-9][A-Za-z0-9_.\-]{1,62}[A-Za-z0-9]"
          placeholder="ticket.resolved"
          spellCheck={false}
        />
      </label>
      <label className="field">
        <span>Category</span>
        <select value={category} onChange={(e) => setCategory(e.target.value)}>
          <option value="">All categories</option>
          {Object.entries(categoryLabels).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <div className="filters__actions">
        <button type="submit" className="button">
          Apply
        </button>
        <button type="button" className="button button--secondary" onClick={clear}>
          Clear
        </button>
      </div>
      <FormProblem problem={problem} className="filters__problem" />
    </form>
  );
}
