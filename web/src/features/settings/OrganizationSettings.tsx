import { useState, type FormEvent } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, invalidate } from '../../api/query';
import { SaveOutcome } from '../../components/States';
import { QueryView } from '../../components/QueryView';

const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

/** The organization's name and time zone, and this month's usage against its quota. */
export function OrganizationSettings() {
  const org = $api.useQuery('get', '/api/v1/console/organization', {});
  return (
    <QueryView query={org} what="the organization">
      {(data) => <OrganizationForm key={data.id} org={data} />}
    </QueryView>
  );
}

function OrganizationForm({ org }: { org: components['schemas']['AdminOrganization'] }) {
  const [name, setName] = useState(org.name);
  const [timeZone, setTimeZone] = useState(org.timeZone);
  const save = $api.useMutation('patch', '/api/v1/console/organization', {
    onSuccess: () => invalidate('/api/v1/console/'),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ body: { name, timeZone } });
  };
  const quota = org.plan.maxEventsPerMonth;
  return (
    <div className="settings-grid">
      <form className="card" onSubmit={submit} aria-labelledby="org-title">
        <h2 id="org-title">Organization</h2>
        <label className="field">
          <span>Name</span>
          <input value={name} required maxLength={200} onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field">
          <span>Time zone</span>
          <input list="time-zones" value={timeZone} required onChange={(e) => setTimeZone(e.target.value)} aria-describedby="tz-help" />
          <datalist id="time-zones">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <small id="tz-help">Days, statistics and times in the console follow this zone (an IANA name such as Europe/Paris).</small>
        </label>
        <SaveOutcome mutation={save} />
        <button type="submit" className="button" disabled={save.isPending}>
          Save
        </button>
      </form>
      <section className="card" aria-labelledby="usage-title">
        <h2 id="usage-title">Usage this month ({org.usage.month})</h2>
        <p className="big">
          {org.usage.events.toLocaleString('en-GB')} events{quota === null ? '' : ` of ${quota.toLocaleString('en-GB')}`}
        </p>
        {quota === null ? (
          <p className="muted">Your plan has no monthly quota.</p>
        ) : (
          <meter min={0} max={quota} value={org.usage.events} high={quota * 0.9} aria-label="Events this month against the quota" />
        )}
        <p className="muted">The developer API is {org.plan.apiEnabled ? 'enabled' : 'disabled'} on your plan.</p>
      </section>
    </div>
  );
}
