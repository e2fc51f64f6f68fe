/**
 * Rules both store backends apply identically, kept in one place so the memory
 * store cannot drift from the Redis one.
 */
import { GatewayError } from '../errors.js';

/**
 * The canonical form of an e-mail address: trimmed and lower-cased. Applied by
 * the stores themselves so uniqueness and lookups are case-insensitive whatever
 * the caller passes.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Orders strings by UTF-16 code units: the same everywhere, unlike
 * `localeCompare`, whose order depends on the host's locale.
 */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The instant (Unix milliseconds) a deny-list entry for a token expiring at
 * `expiresAt` (Unix seconds, possibly fractional) disappears. The entry holds
 * while `Date.now() <= deadline`, as Redis keeps a key up to and including its
 * PXAT instant.
 * @throws RangeError when `expiresAt` is not a finite number.
 */
export function revocationDeadlineMs(expiresAt: number): number {
  if (!Number.isFinite(expiresAt)) {
    throw new RangeError('expiresAt must be a finite number of Unix seconds.');
  }
  return Math.ceil(expiresAt * 1000);
}

/**
 * The refusal of an upsert that would change an existing tenant's type. Its
 * members' tokens carry the type (`tenant_type`) and routes admit by it, so
 * changing it under them would change what live tokens assert.
 */
export function tenantTypeFixed(): GatewayError {
  return new GatewayError(
    'invalid_request',
    "A tenant's type cannot change: remove the tenant and create it again.",
  );
}

/** A client's scopes as stored: sorted, without duplicates. */
export function normaliseScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes)].sort(compareIds);
}

/** An IdP record's e-mail domains as stored: lower-cased, sorted, without duplicates. */
export function normaliseDomains(domains: readonly string[]): string[] {
  return normaliseScopes(domains.map((domain) => domain.toLowerCase()));
}

/**
 * The one key of an IdP record's issuer and client id, unique in the store
 * (issue 42: one issuer may serve several tenants, each with a client of its
 * own). Neither holds a space (`auth/federation/tenant-idps.ts` refuses them), so the
 * pair is unambiguous.
 */
export function idpClientKey(issuer: string, clientId: string): string {
  return `${issuer} ${clientId}`;
}

/** The refusal of an IdP record whose issuer and client id another tenant's record has. */
export function issuerInUse(): GatewayError {
  return new GatewayError(
    'issuer_in_use',
    "This issuer and client id are another tenant's identity provider: register a client of this tenant's own at the issuer.",
  );
}

/** The refusal of a domain another tenant has verified. */
export function domainTaken(): GatewayError {
  return new GatewayError(
    'domain_taken',
    'Another tenant has verified this domain: a verified domain belongs to one tenant.',
  );
}

/** The refusal of one domain too many. */
export function tooManyDomains(max: number): GatewayError {
  return new GatewayError('invalid_request', `A tenant holds at most ${max} domains.`, {
    detail: 'domain',
  });
}
