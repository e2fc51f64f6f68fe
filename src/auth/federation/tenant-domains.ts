/**
 * A tenant's e-mail domains (issue 42): claimed with a DNS TXT challenge,
 * verified by looking the record up, and the one rule every federated
 * sign-in and every IdP set obeys — an identity provider vouches only for
 * domains its tenant has verified, now. Claiming, verifying and removing one
 * are identity operations (`identity/domains.ts`), which the API
 * (`/1/tenants/{tenant_id}/domains`) and the CLI (`tenant domain …`) both
 * call, so they accept and refuse the same.
 *
 * A verified domain belongs to one tenant (the store checks and writes that
 * atomically). Removing a domain leaves an IdP record naming it as it is, but
 * unusable: no sign-in in it passes {@link isDomainVerifiedFor}, and the next
 * IdP set naming it is refused until it is verified again.
 */
import { z } from 'zod';
import { GatewayError } from '../../errors.js';
import type { Store } from '../../store/types.js';

/** The label in front of a domain whose TXT record holds the challenge. */
export const CHALLENGE_LABEL = '_tenant-gateway-challenge';

/** A DNS name of two labels or more, lower-case letters, digits and hyphens (IDNs as `xn--`). */
const DNS_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** An e-mail domain as a tenant names it: a DNS name, lower-cased; `message` when it is not. */
export const emailDomainOf = (message: string) =>
  z
    .string()
    .transform((domain) => domain.toLowerCase())
    .refine((domain) => DNS_NAME.test(domain), message);

const emailDomain = emailDomainOf('must be a DNS name such as example.com');

/** The body of `POST /1/tenants/{tenant_id}/domains`. */
export const domainClaimSchema = z.strictObject({ domain: emailDomain });

/**
 * A domain a caller names (a path segment, an argument), checked.
 * @throws GatewayError `invalid_request` (`detail: domain`)
 */
export function checkDomain(raw: string): string {
  const result = emailDomain.safeParse(raw);
  if (result.success) return result.data;
  throw new GatewayError('invalid_request', `Invalid domain: ${result.error.issues[0]?.message}.`, {
    detail: 'domain',
  });
}

export function noDomain(): GatewayError {
  return new GatewayError('not_found', 'The tenant has no such domain.');
}

/**
 * The IdP set's check: every domain its record names is one the tenant has
 * verified.
 * @throws GatewayError `domain_not_verified` (400) naming the first that is not.
 */
export async function requireVerifiedDomains(
  store: Store,
  tenantId: string,
  domains: readonly string[],
): Promise<void> {
  for (const [index, domain] of domains.entries()) {
    if ((await store.domains.verifiedDomainHolder(domain)) !== tenantId) {
      throw new GatewayError(
        'domain_not_verified',
        `Invalid domains: ${domain} is not a domain this tenant has verified (POST /1/tenants/{tenant_id}/domains, then verify it).`,
        { detail: `domains.${index}` },
      );
    }
  }
}

/** Whether the e-mail's domain is one the tenant has verified now. */
export async function isDomainVerifiedFor(
  store: Store,
  tenantId: string,
  email: string,
): Promise<boolean> {
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  return (await store.domains.verifiedDomainHolder(email.slice(at + 1).toLowerCase())) === tenantId;
}
