/**
 * Moving to another of the user's tenants: a new session for it
 * (`POST /1/sessions` `{tenant_id}`: the gateway checks the membership and
 * ends the old session), then the same page for the new tenant.
 */
import { useState } from 'preact/hooks';
import { call } from '../api';
import type { Me } from '../me';
import { Failure } from '../parts/status';

async function switchTo(tenantId: string, page: string | undefined): Promise<void> {
  await call('POST', '/1/sessions', { body: { tenant_id: tenantId } });
  location.assign(
    page === undefined ? '/console/' : `/console/tenants/${encodeURIComponent(tenantId)}/${page}`,
  );
}

/** The page a tenant's path names (`members`, …), kept across a switch. */
function pageOfPath(): string | undefined {
  return /^\/console\/tenants\/[^/]+\/([a-z]+)/.exec(location.pathname)?.[1];
}

export function TenantSwitch({ me }: { me: Me }) {
  const [error, setError] = useState<unknown>(undefined);
  if (me.tenants.length < 2) return <span class="tenant">{me.tenant_name}</span>;
  return (
    <div class="tenant">
      <label for="tenant-switch">Tenant</label>
      <select
        id="tenant-switch"
        value={me.tenant_id}
        onChange={(event) => {
          const tenantId = (event.currentTarget as HTMLSelectElement).value;
          switchTo(tenantId, pageOfPath()).catch(setError);
        }}
      >
        {me.tenants.map((t) => (
          <option key={t.tenant_id} value={t.tenant_id}>
            {t.name} ({t.role})
          </option>
        ))}
      </select>
      {error === undefined ? null : <Failure error={error} />}
    </div>
  );
}

/** A deep link to a tenant other than the session's: never its data, a switch if the user is a member. */
export function OtherTenant({ me, tenantId }: { me: Me; tenantId: string }) {
  const [error, setError] = useState<unknown>(undefined);
  const theirs = me.tenants.find((t) => t.tenant_id === tenantId);
  return (
    <section>
      <h1>Another tenant</h1>
      {theirs === undefined ? (
        <p>You are not a member of this tenant. You are signed in to {me.tenant_name}.</p>
      ) : (
        <>
          <p>
            This page is for {theirs.name}; you are signed in to {me.tenant_name}.
          </p>
          <button type="button" onClick={() => switchTo(tenantId, pageOfPath()).catch(setError)}>
            Switch to {theirs.name}
          </button>
        </>
      )}
      {error === undefined ? null : <Failure error={error} />}
    </section>
  );
}
