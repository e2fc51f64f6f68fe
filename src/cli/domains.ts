/**
 * `tenant domain add|list|verify|remove`: an org tenant's e-mail domains
 * (issue 42), claimed and verified as the API does it
 * (`auth/tenant-domains.ts`). `add --verified` is the operator's word that
 * the tenant holds the domain: verified at once, no DNS asked (still refused
 * when another tenant has verified it).
 */
import { checkDomain, claimDomain, domainView, verifyDomain } from '../auth/tenant-domains.js';
import type { LoadedConfig } from '../config/index.js';
import { isGatewayError } from '../errors.js';
import { cliActor, orgTenant, print, withCore } from './store-command.js';
import { UsageError } from './usage-error.js';

const ORG_ONLY = 'only org tenants have e-mail domains';
const nowSeconds = () => Math.floor(Date.now() / 1000);

export async function domainAdd(
  loaded: LoadedConfig,
  tenantId: string,
  rawDomain: string,
  options: { verified?: boolean },
): Promise<void> {
  const domain = domainArgument(rawDomain);
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    const verified = options.verified === true;
    const wasVerified = (await core.store.domains.verifiedDomainHolder(domain)) === tenantId;
    const { record, created } = await claimDomain(core.store, tenantId, domain, {
      now: nowSeconds(),
      verified,
    });
    if (created)
      await core.audit.record('domain_added', cliActor(), { tenant_id: tenantId, domain });
    if (verified && !wasVerified)
      await core.audit.record('domain_verified', cliActor(), { tenant_id: tenantId, domain });
    print({ tenant_id: tenantId, ...domainView(record) });
  });
}

export async function domainList(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    print((await core.store.domains.listTenantDomains(tenantId)).map(domainView));
  });
}

export async function domainVerify(
  loaded: LoadedConfig,
  tenantId: string,
  rawDomain: string,
): Promise<void> {
  const domain = domainArgument(rawDomain);
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    const record = await verifyDomain(core, tenantId, domain, nowSeconds()).catch(
      (err: unknown) => {
        if (isGatewayError(err) && err.code === 'not_found')
          throw new UsageError(`${tenantId} has no domain ${domain}`);
        throw err;
      },
    );
    await core.audit.record('domain_verified', cliActor(), { tenant_id: tenantId, domain });
    print({ tenant_id: tenantId, ...domainView(record) });
  });
}

export async function domainRemove(
  loaded: LoadedConfig,
  tenantId: string,
  rawDomain: string,
): Promise<void> {
  const domain = domainArgument(rawDomain);
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, ORG_ONLY);
    if (!(await core.store.domains.removeTenantDomain(tenantId, domain)))
      throw new UsageError(`${tenantId} has no domain ${domain}`);
    await core.audit.record('domain_removed', cliActor(), { tenant_id: tenantId, domain });
    print({ tenant_id: tenantId, domain, removed: true });
  });
}

function domainArgument(raw: string): string {
  try {
    return checkDomain(raw);
  } catch {
    throw new UsageError(`${JSON.stringify(raw)} is not a DNS name such as example.com`);
  }
}
