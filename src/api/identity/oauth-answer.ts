/**
 * What every way of issuing a user's token shares: the grant (a refresh
 * family begun with the token when `tokens.refresh.enabled`, as a Basic login
 * does), and the RFC 6749 §5.1 answer of `POST /1/oauth/token`, never cached.
 */
import type { GrantedToken } from '../../auth/accounts.js';
import type { AccessTokenClaims } from '../../auth/tokens/tokens.js';
import type { UserRecord } from '../../store/types.js';
import { oauthToken, type OAuthTokenExtras } from '../token-representations.js';
import type { ApiContext } from '../state.js';
import { noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

/** A user's token, with the first refresh token of its family when refresh tokens are on. */
export type UserGrant = (
  user: UserRecord,
  tenantId: string,
) => Promise<GrantedToken & { refreshToken?: string }>;

/**
 * How `ctx`'s login is granted its token; a refresh family begun keeps the
 * request's `User-Agent` and client address for its user's list of sessions.
 */
export function userGrant(deps: IdentityRouterDeps, ctx: ApiContext): UserGrant {
  const refresh = deps.refreshTokens;
  if (refresh?.enabled !== true)
    return (user, tenantId) => deps.accounts.grantToken(user, tenantId);
  const from = { userAgent: ctx.get('user-agent') || undefined, ip: deps.clientIp(ctx.req) };
  return (user, tenantId) => refresh.begin(user, tenantId, from);
}

/**
 * The OAuth token response: `access_token`, `token_type`, `expires_in`,
 * `scope`, `tenant_id`, then `extra` (a refresh token, RFC 8693's
 * `issued_token_type`); `Cache-Control: no-store`, `Pragma: no-cache`.
 */
export function answerOAuthToken(
  ctx: ApiContext,
  token: string,
  claims: AccessTokenClaims,
  tenantId: string,
  extra: OAuthTokenExtras = {},
): void {
  noStore(ctx);
  ctx.set('pragma', 'no-cache');
  ctx.body = oauthToken(token, claims, tenantId, extra);
}
