import { createContext, useContext, useEffect } from 'react';
import { useLocation } from 'wouter';
import type { components } from '../../../../generated/openapi';
import { onSignedOut, setCsrfToken } from '../../api/client';
import { $api, queryClient } from '../../api/query';

export type Session = components['schemas']['SessionResponse'];

const SessionContext = createContext<Session | undefined>(undefined);
export const SessionProvider = SessionContext.Provider;

/** The signed-in member, organization and memberships (inside the signed-in shell). */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in shell');
  return session;
}

export const canAdminister = (session: Session) => session.member.role !== 'member';

/** GET /me; a 401 answer means "signed out" and is not retried. */
export function useMe() {
  const me = $api.useQuery('get', '/api/v1/console/me', {}, { staleTime: 5 * 60_000 });
  useEffect(() => setCsrfToken(me.data?.csrfToken), [me.data?.csrfToken]);
  return me;
}

/** After sign-in: the answer is /me's, so the shell renders at once. */
export function rememberSession(session: Session): void {
  setCsrfToken(session.csrfToken);
  queryClient.clear();
  queryClient.setQueryData(['get', '/api/v1/console/me', {}], session);
}

/** Any 401 (an expired or ended session) drops every cached answer and goes to sign-in. */
export function useSignedOutRedirect(): void {
  const [location, navigate] = useLocation();
  useEffect(
    () =>
      onSignedOut(() => {
        setCsrfToken(undefined);
        queryClient.clear();
        if (!location.startsWith('/sign-in') && !location.startsWith('/invite'))
          navigate(`/sign-in?next=${encodeURIComponent(location)}`, { replace: true });
      }),
    [location, navigate],
  );
}
