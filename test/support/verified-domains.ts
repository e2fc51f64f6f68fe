/**
 * Tenants' e-mail domains verified straight in the store (as the operator's
 * `tenant domain add T D --verified` does): for suites whose subject is not
 * the verification itself, so that an IdP may name them (issue 42).
 */
import type { Store } from '../../src/store/types.js';

export async function verifyDomains(
  store: Store,
  tenantId: string,
  domains: readonly string[],
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  for (const domain of domains) {
    const challenge = `test-${tenantId}-${domain}`;
    const added = await store.domains.addTenantDomain({
      tenantId,
      domain,
      challenge,
      createdAt: now,
    });
    if (added === null) throw new Error(`no org tenant ${tenantId}`);
    await store.domains.verifyTenantDomain(tenantId, domain, now);
  }
}
