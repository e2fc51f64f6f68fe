/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0, issue 44):
 * where a sign-out sends the browser of a session begun at a tenant's
 * identity provider, so the person is signed out there too — the provider's
 * `end_session_endpoint` (from its checked discovery document:
 * `provider-discovery.ts`, which keeps it only on the issuer's origin) with
 * `client_id` (§2: the gateway's client at the provider, as no ID token is
 * kept to send as `id_token_hint`) and `post_logout_redirect_uri`, the
 * gateway's sign-in page on its public origin, which the tenant's admin
 * registers at the provider (§3: a provider sends the browser back only to a
 * registered URI).
 *
 * Undefined — the sign-out stays at the gateway — when the session was not
 * begun at an IdP, the tenant's record no longer names that issuer, the
 * provider has no such endpoint, or its discovery cannot be had now (a
 * sign-out never fails because a provider is down).
 */
import type { BrowserSessionRecord } from '../../store/browser-sessions.js';
import type { IdpStore } from '../../store/idps.js';
import type { ProviderDiscovery } from './provider-discovery.js';

/** The sign-in engineer's sign-out hook: the provider's logout URL for a session, if any. */
export type EndAtIdp = (session: BrowserSessionRecord) => Promise<string | undefined>;

/** Where the provider sends the browser back after its logout: the sign-in page. */
export const POST_LOGOUT_PATH = '/1/sign-in';

export interface EndAtIdpDeps {
  idps: IdpStore;
  discovery: ProviderDiscovery;
  /**
   * `publicUrl`'s origin: the `post_logout_redirect_uri` is on it. Without
   * one, none is sent (the provider shows its own signed-out page): the hook
   * has no request whose origin it could trust.
   */
  publicOrigin: string | undefined;
}

export function createEndAtIdp(deps: EndAtIdpDeps): EndAtIdp {
  return async (session) => {
    if (session.idp === undefined) return undefined;
    const idp = await deps.idps.getTenantIdp(session.tenantId);
    if (idp === null || idp.issuer !== session.idp.issuer) return undefined;
    let endSession;
    try {
      ({ endSession } = await deps.discovery.endpointsOf(idp.issuer));
    } catch {
      return undefined;
    }
    if (endSession === undefined) return undefined;
    const url = new URL(endSession);
    url.searchParams.set('client_id', idp.clientId);
    if (deps.publicOrigin !== undefined)
      url.searchParams.set(
        'post_logout_redirect_uri',
        `${new URL(deps.publicOrigin).origin}${POST_LOGOUT_PATH}`,
      );
    return url.href;
  };
}
