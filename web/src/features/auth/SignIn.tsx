import { useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import { $api } from '../../api/query';
import { RequestFailure } from '../../components/States';
import { useTitle } from '../../components/useTitle';
import { rememberSession } from './session';

/** Sign-in; also the organization switcher's second step (?org=ID&email=E: the password again, for that membership). */
export function SignIn() {
  useTitle('Sign in');
  const params = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const [email, setEmail] = useState(params.get('email') ?? '');
  const [password, setPassword] = useState('');
  const organizationId = params.get('org') ?? undefined;
  const signIn = $api.useMutation('post', '/api/v1/console/session', {
    onSuccess: (session) => {
      rememberSession(session);
      const next = params.get('next');
      navigate(next?.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate({ body: { email, password, ...(organizationId ? { organizationId } : {}) } });
  };

  return (
    <main id="main" className="auth">
      <form className="card auth__card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to the console</h1>
        {params.get('orgName') && <p>Switching to {params.get('orgName')}: enter your password again.</p>}
        <label className="field">
          <span>Email</span>
          <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <RequestFailure failure={signIn.error} />
        <button type="submit" className="button" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
