import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { $api, queryClient } from '../api/query';
import { setCsrfToken } from '../api/client';
import { canAdminister, useSession } from '../features/auth/session';

function NavLink({ href, children }: { href: string; children: ReactNode }) {
  const [location] = useLocation();
  const current = href === '/' ? location === '/' || location.startsWith('/workers') : location.startsWith(href);
  return (
    <Link href={href} className="nav__link" aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/** Switching needs the password again: sign-in opens a session on one membership. */
function OrganizationSwitcher() {
  const session = useSession();
  const [, navigate] = useLocation();
  if (session.memberships.length < 2) return <span className="header__org">{session.organization.name}</span>;
  return (
    <label className="header__org">
      <span className="visually-hidden">Organization</span>
      <select
        value={session.organization.id}
        onChange={(e) => {
          const target = session.memberships.find((m) => m.organizationId === e.target.value);
          if (!target) return;
          const query = new URLSearchParams({ org: target.organizationId, orgName: target.organizationName, email: session.member.email });
          navigate(`/sign-in?${query}`);
        }}
      >
        {session.memberships.map((m) => (
          <option key={m.organizationId} value={m.organizationId}>
            {m.organizationName} ({m.role})
          </option>
        ))}
      </select>
    </label>
  );
}

export function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const [, navigate] = useLocation();
  const signOut = $api.useMutation('delete', '/api/v1/console/session', {
    onSettled: () => {
      setCsrfToken(undefined);
      queryClient.clear();
      navigate('/sign-in', { replace: true });
    },
  });
  return (
    <>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="header">
        <Link href="/" className="header__brand">
          Ingest console
        </Link>
        <nav aria-label="Main" className="nav">
          <NavLink href="/">Timeline</NavLink>
          <NavLink href="/statistics">Statistics</NavLink>
          {canAdminister(session) && <NavLink href="/settings">Developer settings</NavLink>}
        </nav>
        <div className="header__account">
          <OrganizationSwitcher />
          <span className="header__who" title={session.member.email}>
            {session.member.name ?? session.member.email}
          </span>
          <button type="button" className="button button--secondary" onClick={() => signOut.mutate({})} disabled={signOut.isPending}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
