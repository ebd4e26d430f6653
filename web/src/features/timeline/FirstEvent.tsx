import { Link } from 'wouter';
import { CopyButton } from '../../components/CopyButton';
import { Empty } from '../../components/States';
import { canAdminister, useSession } from '../auth/session';

/** A new organization's empty timeline: the one command that sends its first event. */
export function FirstEvent() {
  const session = useSession();
  const curl = `curl -X POST ${window.location.origin}/api/v1/ingest/events \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -d '{"events":[{"eventType":"ticket.resolved","category":"TASK_UPDATE","actor":{"externalId":"u-1","displayName":"Dana Whitfield"}}]}'`;
  return (
    <Empty title="No event yet: send your first one">
      <p>
        Your systems send events to the ingest API with an app&apos;s key, and they show here as they arrive. Set <code>KEY</code> to a key
        of an app whose whitelist allows <code>ticket.resolved</code>, then run:
      </p>
      <pre className="code" tabIndex={0} aria-label="The command that sends a first event">
        {curl}
      </pre>
      <CopyButton text={curl} label="Copy the command" />
      {canAdminister(session) ? (
        <p>
          No app or key yet? <Link href="/settings/apps">Create an app and issue a key</Link> in Developer settings.
        </p>
      ) : (
        <p className="muted">An owner or admin of the organization issues the keys.</p>
      )}
    </Empty>
  );
}
