/**
 * `tenant domain add|list|verify|remove`: an org tenant's e-mail domains
 * (issue 42), by the operations the API calls too (`identity/domains.ts`),
 * the operator as actor. `add --verified` is the operator's word that the
 * tenant holds the domain: verified at once, no DNS asked (still refused
 * when another tenant has verified it).
 */
import { domainView } from '../api/representations.js';
import { checkDomain } from '../auth/federation/tenant-domains.js';
import type { LoadedConfig } from '../config/index.js';
import { addDomain, removeDomain, verifyDomain } from '../identity/domains.js';
import { operator, orgTenant, print, withCore } from './store-command.js';
import { notFoundAs, UsageError } from './usage-error.js';

const ORG_ONLY = 'only org tenants have e-mail domains';

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
    const { record } = await addDomain(core, operator(), tenantId, domain, { verified });
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
    const record = await verifyDomain(core, operator(), tenantId, domain).catch(
      notFoundAs(`${tenantId} has no domain ${domain}`),
    );
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
    await removeDomain(core, operator(), tenantId, domain).catch(
      notFoundAs(`${tenantId} has no domain ${domain}`),
    );
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
