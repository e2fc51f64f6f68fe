/**
 * OpenID Connect Back-Channel Logout 1.0 at the gateway (issue 44): a
 * tenant's identity provider says a user's session there ended, and the
 * browser sessions begun at that provider end with it — on every instance
 * before the answer (`BrowserSessions.endFromIdp`).
 *
 * The token is validated (`logout-token.ts`), its `jti` kept against replay
 * (`SsoStore.addSsoRecord`: of two deliveries of one token, one ends
 * sessions, the other is refused), then the user the provider means is found
 * by its `sub` or `sid` under that tenant and issuer (`idp-session-index.ts`)
 * and only their sessions begun at that issuer (and of that `sid` when the
 * token names one) end: a password session, or a session begun at another
 * tenant's provider, stays.
 */
import { createHash } from 'node:crypto';
import type { SsoStore } from '../../store/sso.js';
import type { BrowserSessions } from '../sessions/browser-sessions.js';
import { userOfIdpSession } from './idp-session-index.js';
import {
  LOGOUT_JTI_TTL_SECONDS,
  logoutRefused,
  verifyLogoutToken,
  type LogoutTokenDeps,
} from './logout-token.js';

export interface BackchannelLogoutDeps extends LogoutTokenDeps {
  sso: SsoStore;
  sessions: Pick<BrowserSessions, 'endFromIdp'>;
}

/** What a logout did: for the audit event. */
export interface IdpLogout {
  tenantId: string;
  issuer: string;
  /** The user the provider named; undefined when no session of theirs is known here. */
  userId?: string;
  /** How many sessions ended. */
  ended: number;
}

/**
 * @param seen filled with the tenant and issuer once known (for the audit of a refusal)
 * @throws GatewayError `invalid_request` (a token that does not validate, or replayed), `unavailable`
 */
export async function backchannelLogout(
  deps: BackchannelLogoutDeps,
  logoutToken: string,
  seen: { tenantId?: string; issuer?: string } = {},
): Promise<IdpLogout> {
  const token = await verifyLogoutToken(deps, logoutToken, seen);
  const { tenantId, issuer } = token;
  // A `jti` is unique per issuer; kept while a token of this age is accepted.
  const jtiKey = createHash('sha256').update(`${issuer}\n${token.jti}`).digest('base64url');
  if (!(await deps.sso.addSsoRecord('logout-jti', jtiKey, '1', LOGOUT_JTI_TTL_SECONDS)))
    throw logoutRefused('replayed');
  const userId = await userOfIdpSession(deps.sso, { tenantId, issuer }, token);
  if (userId === null) return { tenantId, issuer, ended: 0 };
  const ended = await deps.sessions.endFromIdp(userId, issuer, token.sid);
  return { tenantId, issuer, userId, ended };
}
