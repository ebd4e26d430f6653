import { Link, Route, Switch, useLocation } from 'wouter';
import { useTitle } from '../../components/useTitle';
import { AppSettings } from './AppSettings';
import { AppsSettings } from './AppsSettings';
import { AuditLog } from './AuditLog';
import { MembersSettings } from './MembersSettings';
import { OrganizationSettings } from './OrganizationSettings';

const sections = [
  ['/', 'Organization'],
  ['/apps', 'Apps and keys'],
  ['/members', 'Members'],
  ['/audit-log', 'Audit log'],
] as const;

/** Developer settings, for owners and admins (the API answers 403 to anyone else). */
export default function SettingsPage() {
  useTitle('Developer settings');
  const [location] = useLocation();
  return (
    <>
      <div className="page-head">
        <h1>Developer settings</h1>
      </div>
      <nav aria-label="Developer settings" className="tabs">
        {sections.map(([href, label]) => (
          <Link
            key={href}
            href={href}
            className="tabs__link"
            aria-current={(href === '/' ? location === '/' : location.startsWith(href)) ? 'page' : undefined}
          >
            {label}
          </Link>
        ))}
      </nav>
      <Switch>
        <Route path="/" component={OrganizationSettings} />
        <Route path="/apps" component={AppsSettings} />
        <Route path="/apps/:appId">{(params) => <AppSettings appId={params.appId} />}</Route>
        <Route path="/members" component={MembersSettings} />
        <Route path="/audit-log" component={AuditLog} />
      </Switch>
    </>
  );
}
