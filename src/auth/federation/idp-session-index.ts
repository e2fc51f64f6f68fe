/**
 * Which user an identity provider means by a `sub` or a `sid` (issue 44).
 * A back-channel logout token names the user as the provider knows them
 * (OIDC Back-Channel Logout 1.0 §2.4: `sub`, `sid` or both), never by e-mail,
 * and the gateway keeps no provider subject on its users (a federated user is
 * found by their verified e-mail). So when a browser session begins at a
 * tenant's provider, the provider's `sub` (and `sid` when it sent one) is
 * recorded against the user, under the tenant and the issuer, for as long as
 * such a session may live (`sessions.absoluteTimeoutSeconds`).
 *
 * Keyed by tenant, issuer and value: a token of another tenant's provider
 * (or of the same issuer under another tenant's client) naming the same
 * `sub` finds nobody. The key is a SHA-256, so no provider value is a store
 * key as it is.
 */
import { createHash } from 'node:crypto';
import type { SsoStore } from '../../store/sso.js';

/** Where a session began: the tenant whose IdP record was used, its issuer, and what the IdP said. */
export interface IdpSessionOrigin {
  tenantId: string;
  issuer: string;
  subject: string;
  sid?: string;
}

const keyOf = (tenantId: string, issuer: string, value: string): string =>
  createHash('sha256').update(`${tenantId}\n${issuer}\n${value}`).digest('base64url');

/** Records the user behind the provider's `sub` (and `sid`) for `ttlSeconds`. */
export async function rememberIdpSession(
  sso: SsoStore,
  origin: IdpSessionOrigin,
  userId: string,
  ttlSeconds: number,
): Promise<void> {
  const { tenantId, issuer } = origin;
  await sso.putSsoRecord(
    'idp-subject',
    keyOf(tenantId, issuer, origin.subject),
    userId,
    ttlSeconds,
  );
  if (origin.sid !== undefined)
    await sso.putSsoRecord('idp-sid', keyOf(tenantId, issuer, origin.sid), userId, ttlSeconds);
}

/** The user the provider means: by `sub` when given and known, else by `sid`; null when neither is known. */
export async function userOfIdpSession(
  sso: SsoStore,
  at: { tenantId: string; issuer: string },
  named: { subject?: string | undefined; sid?: string | undefined },
): Promise<string | null> {
  if (named.subject !== undefined) {
    const user = await sso.readSsoRecord(
      'idp-subject',
      keyOf(at.tenantId, at.issuer, named.subject),
    );
    if (user !== null) return user;
  }
  if (named.sid === undefined) return null;
  return sso.readSsoRecord('idp-sid', keyOf(at.tenantId, at.issuer, named.sid));
}
