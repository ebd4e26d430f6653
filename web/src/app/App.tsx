import { lazy, Suspense, type ReactNode } from 'react';
import { Redirect, Route, Router, Switch } from 'wouter';
import { ApiFailure } from '../api/client';
import { ErrorState, Loading } from '../components/States';
import { Invite } from '../features/auth/Invite';
import { canAdminister, SessionProvider, useMe, useSession, useSignedOutRedirect } from '../features/auth/session';
import { SignIn } from '../features/auth/SignIn';
import TimelinePage from '../features/timeline/TimelinePage';
import { Layout } from './Layout';
import { NotFound } from './NotFound';

const consoleBase = '/console';

// Pages past the first load their code when visited: the first page stays small.
const SettingsPage = lazy(() => import('../features/settings/SettingsPage'));
const WorkerPage = lazy(() => import('../features/workers/WorkerPage'));
const StatisticsPage = lazy(() => import('../features/statistics/StatisticsPage'));

// Inside the nested /settings route "/" would mean /settings itself: "~" names the console's own root.
function AdminOnly({ children }: { children: ReactNode }) {
  return canAdminister(useSession()) ? children : <Redirect to={`~${consoleBase}/`} replace />;
}

function SignedIn() {
  const me = useMe();
  if (me.isPending) return <Loading label="Opening the console…" />;
  if (me.error instanceof ApiFailure && me.error.status === 401) return <Redirect to="/sign-in" replace />;
  if (me.isError) return <ErrorState error={me.error} retry={() => void me.refetch()} what="your session" />;
  return (
    <SessionProvider value={me.data}>
      <Layout>
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/settings" nest>
              <AdminOnly>
                <SettingsPage />
              </AdminOnly>
            </Route>
            <Route path="/workers/:workerId">{(params) => <WorkerPage workerId={params.workerId} />}</Route>
            <Route path="/statistics" component={StatisticsPage} />
            <Route path="/" component={TimelinePage} />
            <Route>
              <NotFound />
            </Route>
          </Switch>
        </Suspense>
      </Layout>
    </SessionProvider>
  );
}

function Routes() {
  useSignedOutRedirect();
  return (
    <Switch>
      <Route path="/sign-in" component={SignIn} />
      <Route path="/invite" component={Invite} />
      <Route>
        <SignedIn />
      </Route>
    </Switch>
  );
}

export function App() {
  return (
    <Router base={consoleBase}>
      <Routes />
    </Router>
  );
}
