import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { $api } from '../../api/query';
import { ErrorState, Loading, RequestFailure } from '../../components/States';
import { useTitle } from '../../components/useTitle';
import { rememberSession } from './session';

/** The token travels in the link's fragment (`#token=…`), so it never reaches a server log. */
function inviteToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
}

/** An invited member sets a password, and is signed in. */
export function Invite() {
  useTitle('Join');
  const [token] = useState(inviteToken);
  const [, navigate] = useLocation();
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const invite = $api.useQuery(
    'get',
    '/api/v1/console/invite',
    { params: { header: { 'X-Invite-Token': token } } },
    { enabled: token !== '' },
  );
  const accept = $api.useMutation('post', '/api/v1/console/invites/accept', {
    onSuccess: (session) => {
      rememberSession(session);
      navigate('/', { replace: true });
    },
  });
  const mismatch = again !== '' && again !== password;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!mismatch) accept.mutate({ body: { token, password } });
  };

  let content;
  if (!token) content = <p role="alert">This link has no invite token: open the whole link you were sent.</p>;
  else if (invite.isPending) content = <Loading label="Checking your invite…" />;
  else if (invite.isError) content = <ErrorState error={invite.error} what="your invite" />;
  else
    content = (
      <form onSubmit={submit}>
        <p>
          You are invited to <strong>{invite.data.organization.name}</strong> as {invite.data.member.role}, with the email{' '}
          <strong>{invite.data.member.email}</strong>. Choose a password (12 to 200 characters) to sign in.
        </p>
        <input type="email" hidden readOnly autoComplete="username" value={invite.data.member.email} />
        <label className="field">
          <span>New password</span>
          <input
            type="password"
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={200}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <label className="field">
          <span>The same password again</span>
          <input
            type="password"
            autoComplete="new-password"
            required
            value={again}
            aria-invalid={mismatch || undefined}
            aria-describedby={mismatch ? 'mismatch' : undefined}
            onChange={(e) => setAgain(e.target.value)}
          />
        </label>
        {mismatch && (
          <p id="mismatch" className="form-error">
            The two passwords differ.
          </p>
        )}
        <RequestFailure failure={accept.error} />
        <button type="submit" className="button" disabled={accept.isPending || mismatch}>
          Set password and sign in
        </button>
      </form>
    );

  return (
    <main id="main" className="auth">
      <div className="card auth__card">
        <h1>Join the console</h1>
        {content}
      </div>
    </main>
  );
}
