/**
 * A tenant's e-mail domains (issue 42): claimed with a DNS TXT challenge,
 * verified by looking the record up, and the one rule every federated
 * sign-in and every IdP set obeys — an identity provider vouches only for
 * domains its tenant has verified, now. The API
 * (`/1/tenants/{tenant_id}/domains`) and the CLI (`tenant domain …`) both go
 * through here, so they accept and refuse the same.
 *
 * A verified domain belongs to one tenant (the store checks and writes that
 * atomically). Removing a domain leaves an IdP record naming it as it is, but
 * unusable: no sign-in in it passes {@link isDomainVerifiedFor}, and the next
 * IdP set naming it is refused until it is verified again.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { domainTaken } from '../store/normalise.js';
import type { Store, TenantDomain } from '../store/types.js';
import type { TxtLookup } from './dns-txt.js';

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

/** A domain as the API and the CLI show it. */
export interface DomainView {
  domain: string;
  verified: boolean;
  /** Unix seconds; only once verified. */
  verified_at?: number;
  /** The TXT record to publish; only while unverified. */
  txt_name?: string;
  txt_value?: string;
}

export function domainView(record: TenantDomain): DomainView {
  if (record.verifiedAt !== undefined)
    return { domain: record.domain, verified: true, verified_at: record.verifiedAt };
  return {
    domain: record.domain,
    verified: false,
    txt_name: `${CHALLENGE_LABEL}.${record.domain}`,
    txt_value: record.challenge,
  };
}

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

/** What a claim did: the record, and whether it is new. */
export interface DomainClaim {
  record: TenantDomain;
  created: boolean;
}

/**
 * Adds the domain with a fresh challenge (verified at once when `verified`:
 * the operator's word, no DNS), or answers the one the tenant has.
 * @throws GatewayError `not_found` (no org tenant), `domain_taken` (409),
 * `invalid_request` (one domain too many)
 */
export async function claimDomain(
  store: Store,
  tenantId: string,
  domain: string,
  { now, verified = false }: { now: number; verified?: boolean },
): Promise<DomainClaim> {
  const challenge = randomBytes(24).toString('base64url');
  const input: TenantDomain = { tenantId, domain, challenge, createdAt: now };
  const record = await store.domains.addTenantDomain(
    verified ? { ...input, verifiedAt: now } : input,
  );
  if (record === null) throw new GatewayError('not_found', 'There is no org tenant with this id.');
  const created = record.challenge === challenge;
  if (!verified || record.verifiedAt !== undefined) return { record, created };
  // The tenant had it unverified: the operator verifies it.
  return { record: await markVerified(store, tenantId, domain, now), created };
}

/**
 * Verifies the tenant's domain by its TXT challenge (kept verified when it
 * already is: no DNS asked).
 * @throws GatewayError `not_found` (no such domain of the tenant),
 * `domain_not_verified` (400: the record is not published), `domain_taken`
 * (409), `unavailable` (503: the DNS could not be asked)
 */
export async function verifyDomain(
  deps: { store: Store; lookupTxt: TxtLookup },
  tenantId: string,
  domain: string,
  now: number,
): Promise<TenantDomain> {
  const record = (await deps.store.domains.listTenantDomains(tenantId)).find(
    (d) => d.domain === domain,
  );
  if (record === undefined) throw noDomain();
  if (record.verifiedAt !== undefined) return record;
  // Another tenant's already: no DNS asked (the store checks again as it writes).
  const holder = await deps.store.domains.verifiedDomainHolder(domain);
  if (holder !== null && holder !== tenantId) throw domainTaken();
  const name = `${CHALLENGE_LABEL}.${domain}`;
  if (!(await deps.lookupTxt(name)).includes(record.challenge)) {
    throw new GatewayError(
      'domain_not_verified',
      `No TXT record of ${name} holds the challenge: publish it (txt_value) and verify again once DNS has it.`,
      { detail: domain },
    );
  }
  return markVerified(deps.store, tenantId, domain, now);
}

async function markVerified(
  store: Store,
  tenantId: string,
  domain: string,
  now: number,
): Promise<TenantDomain> {
  const verified = await store.domains.verifyTenantDomain(tenantId, domain, now);
  if (verified === null) throw noDomain();
  return verified;
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
