/**
 * "Sign in with your company" (issue 44): which tenant's identity provider an
 * e-mail address goes to. The tenant that has verified the address's domain
 * (a verified domain belongs to one tenant: `tenant-domains.ts`) and whose
 * IdP record lists it; nobody else's. An unverified domain, or one the
 * holder's IdP does not list, goes nowhere: no provider is asked, and the
 * person signs in with a password.
 */
import type { Store } from '../../store/types.js';

/** Longer than any e-mail address (RFC 5321 §4.5.3.1: 254 in a path). */
const MAX_EMAIL_LENGTH = 320;

/** The tenant whose IdP signs in `email`; null when none does. */
export async function companyTenantFor(
  store: Pick<Store, 'domains' | 'idps'>,
  email: string,
): Promise<string | null> {
  const at = email.lastIndexOf('@');
  if (email.length > MAX_EMAIL_LENGTH || at < 1) return null;
  const domain = email
    .slice(at + 1)
    .trim()
    .toLowerCase();
  if (domain === '') return null;
  const tenantId = await store.domains.verifiedDomainHolder(domain);
  if (tenantId === null) return null;
  const idp = await store.idps.getTenantIdp(tenantId);
  return idp !== null && idp.domains.includes(domain) ? tenantId : null;
}
