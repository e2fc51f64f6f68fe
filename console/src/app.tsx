/**
 * The console's frame: who is signed in, the tenant switch, the navigation
 * (a tenant's admin pages only for its admins), and the page of the path.
 * A page never shows another tenant's data: a deep link to another tenant
 * offers the switch (a new session for it, the membership checked by the
 * gateway) instead.
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { ApiError } from './api';
import { loadMe, adminHere, type Me } from './me';
import { signInAgain } from './signed-out';
import { follow, routeOf, tenantPath, usePath, navigate, type Route } from './router';
import { useLoad } from './parts/load';
import { Failure, Loading } from './parts/status';
import { TenantSwitch, OtherTenant } from './pages/tenant-switch';
import { AccountPage } from './pages/account';
import { MembersPage } from './pages/members';
import { ClientsPage } from './pages/clients';
import { IdpPage } from './pages/idp';
import { AuditPage } from './pages/audit';

export function App() {
  const path = usePath();
  const [me] = useLoad(loadMe, []);
  if (me.state === 'loading')
    return (
      <Frame>
        <Loading what="your account" />
      </Frame>
    );
  if (me.state === 'failed') {
    if (me.error instanceof ApiError && me.error.code === 'invalid_token') signInAgain();
    return (
      <Frame>
        <Failure error={me.error} />
      </Frame>
    );
  }
  return <Signed me={me.value} route={routeOf(path)} />;
}

function Signed({ me, route }: { me: Me; route: Route }) {
  useEffect(() => {
    if (route.page === 'home')
      navigate(adminHere(me) ? tenantPath(me.tenant_id, 'members') : '/console/account', true);
  }, [route.page]);
  if (route.page === 'home') return null;
  return (
    <Frame me={me}>
      <Page me={me} route={route} />
    </Frame>
  );
}

function Page({ me, route }: { me: Me; route: Route }) {
  if (route.page === 'account') return <AccountPage me={me} />;
  if (route.page === 'unknown' || route.page === 'home')
    return (
      <section>
        <h1>No such page</h1>
        <p>
          <a href="/console/account" onClick={follow}>
            Go to your account
          </a>
        </p>
      </section>
    );
  if (route.tenantId !== me.tenant_id) return <OtherTenant me={me} tenantId={route.tenantId} />;
  if (!adminHere(me))
    return (
      <section>
        <h1>For the tenant's admins</h1>
        <p>
          Only an admin of {me.tenant_name} manages its members, machine clients, identity provider
          and audit events.{' '}
          <a href="/console/account" onClick={follow}>
            Your account
          </a>{' '}
          is yours to manage.
        </p>
      </section>
    );
  if (route.page === 'members') return <MembersPage me={me} />;
  if (route.page === 'clients') return <ClientsPage me={me} />;
  if (route.page === 'idp') return <IdpPage me={me} />;
  return <AuditPage me={me} />;
}

function Frame({ me, children }: { me?: Me; children: ComponentChildren }) {
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">tenant-gateway console</span>
        {me === undefined ? null : (
          <>
            <TenantSwitch me={me} />
            <span class="who">{me.user_email}</span>
            <form method="post" action="/1/sign-out">
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          </>
        )}
      </header>
      {me === undefined ? null : <Nav me={me} />}
      <main id="main" tabIndex={-1} class="page">
        {children}
      </main>
    </>
  );
}

function Nav({ me }: { me: Me }) {
  const here = location.pathname;
  const link = (href: string, label: string) => (
    <li>
      <a href={href} onClick={follow} aria-current={here.startsWith(href) ? 'page' : undefined}>
        {label}
      </a>
    </li>
  );
  return (
    <nav aria-label="Console">
      <ul>
        {adminHere(me) ? (
          <>
            {link(tenantPath(me.tenant_id, 'members'), 'Members')}
            {link(tenantPath(me.tenant_id, 'clients'), 'Machine clients')}
            {link(tenantPath(me.tenant_id, 'idp'), 'Identity provider')}
            {link(tenantPath(me.tenant_id, 'audit'), 'Audit')}
          </>
        ) : null}
        {link('/console/account', 'Your account')}
      </ul>
    </nav>
  );
}
