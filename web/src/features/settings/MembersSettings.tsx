import { useState, type FormEvent } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, invalidate } from '../../api/query';
import { RequestFailure } from '../../components/States';
import { DataTable, QueryView, actionsColumn } from '../../components/QueryView';
import { useSession } from '../auth/session';
import { CopyButton } from '../../components/CopyButton';

type Role = components['schemas']['MemberRole'];
const roles: Role[] = ['owner', 'admin', 'member'];

/** Members and their roles; invite one (the link to send them); change a role; remove. */
export function MembersSettings() {
  const session = useSession();
  const members = $api.useQuery('get', '/api/v1/console/members', {});
  const changed = () => invalidate('/api/v1/console/members');
  const setRole = $api.useMutation('patch', '/api/v1/console/members/{memberId}', { onSuccess: changed });
  const remove = $api.useMutation('delete', '/api/v1/console/members/{memberId}', { onSuccess: changed });
  // Only an owner makes or unmakes owners.
  const assignable = session.member.role === 'owner' ? roles : roles.filter((r) => r !== 'owner');
  const failure = setRole.error ?? remove.error;

  return (
    <div className="settings-grid">
      <section className="card" aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <QueryView query={members} what="the members">
          {(data) => (
            <DataTable caption="Members of the organization" columns={['Member', 'Role', actionsColumn]}>
              {data.items.map((m) => {
                const locked = m.role === 'owner' && session.member.role !== 'owner';
                return (
                  <tr key={m.id}>
                    <td>
                      {m.name ?? m.email}
                      {m.name && <div className="muted small">{m.email}</div>}
                    </td>
                    <td>
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        disabled={locked || setRole.isPending}
                        onChange={(e) => {
                          const role = roles.find((r) => r === e.target.value);
                          if (role) setRole.mutate({ params: { path: { memberId: m.id } }, body: { role } });
                        }}
                      >
                        {(locked ? roles : assignable).map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>
                      {m.id !== session.member.id && !locked && (
                        <button
                          type="button"
                          className="button button--danger"
                          aria-label={`Remove ${m.email}`}
                          onClick={() =>
                            window.confirm(`Remove ${m.email} from the organization?`) &&
                            remove.mutate({ params: { path: { memberId: m.id } } })
                          }
                        >
                          Remove
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </DataTable>
          )}
        </QueryView>
        <RequestFailure failure={failure} />
      </section>
      <InviteForm roles={assignable} onInvited={changed} />
    </div>
  );
}

function InviteForm({ roles: choices, onInvited }: { roles: Role[]; onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const invite = $api.useMutation('post', '/api/v1/console/members', {
    onSuccess: () => {
      setEmail('');
      setName('');
      onInvited();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ body: { email, role, ...(name ? { name } : {}) } });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a member</h2>
      <label className="field">
        <span>Email</span>
        <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label className="field">
        <span>Name (optional)</span>
        <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
      </label>
      <label className="field">
        <span>Role</span>
        <select value={role} onChange={(e) => setRole(choices.find((r) => r === e.target.value) ?? 'member')}>
          {choices.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <RequestFailure failure={invite.error} />
      <button type="submit" className="button" disabled={invite.isPending}>
        Invite
      </button>
      {invite.data && (
        <div className="secret" role="region" aria-labelledby="invite-link-title">
          <h3 id="invite-link-title">Send this link to {invite.data.member.email}</h3>
          <p className="muted small">It works once, for 72 hours; they choose their password there.</p>
          <label className="field">
            <span>Invite link</span>
            <input readOnly value={invite.data.url} className="mono" onFocus={(e) => e.target.select()} />
          </label>
          <CopyButton text={invite.data.url} label="Copy link" />
        </div>
      )}
    </form>
  );
}
