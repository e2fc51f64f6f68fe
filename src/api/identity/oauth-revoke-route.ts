/**
 * `POST /1/oauth/revoke` (RFC 7009): form `token=…` and an optional
 * `token_type_hint`. The token is the credential: whoever holds it may end it
 * (the gateway's refresh tokens are issued to no client, so there is no
 * client to authenticate; a client's credentials sent along are ignored).
 *
 * - a refresh token of a family (its current token, or the one just
 *   rotated): the family ends, with every access token issued in it;
 * - an access token that is alive: it is deny-listed, and its refresh family
 *   (`fid`) ends too (RFC 7009 §2.1 lets the server end the grant);
 * - anything else — unknown, malformed, expired, already revoked, an API
 *   key — changes nothing and is answered the same 200 (§2.2), so the
 *   endpoint tells no one whether a string was a token.
 *
 * The hint is not needed: a refresh token is known by its `tgr_` prefix
 * (§2.1 lets the server ignore it). Every revocation is confirmed by every
 * instance (lease mode) before the 200.
 */
import type { Router } from '@koa/router';
import type { RefreshFamily } from '../../auth/refresh/refresh-grant.js';
import { REFRESH_TOKEN_PREFIX } from '../../auth/refresh/refresh-tokens.js';
import { isGatewayError } from '../../errors.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, namePrincipal, noStore, tokenHolder } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { param, readForm, requiredParam } from './oauth-form.js';

export function addOAuthRevokeRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.post('/oauth/revoke', (ctx) => revoke(deps, ctx));
}

async function revoke(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const form = await readForm(ctx, deps.bodyLimit);
  const token = requiredParam(form, 'token');
  param(form, 'token_type_hint'); // checked for repetition only: the token's shape says what it is
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) await revokeRefreshToken(deps, ctx, token);
  else await revokeAccessToken(deps, ctx, token);
  noStore(ctx);
  ctx.status = 200;
  ctx.body = '';
}

async function revokeRefreshToken(deps: IdentityRouterDeps, ctx: ApiContext, token: string) {
  const family = (await deps.refreshTokens?.revokeByToken(token)) ?? null;
  if (family === null) return;
  await recordRevoked(deps, ctx, family);
}

async function revokeAccessToken(deps: IdentityRouterDeps, ctx: ApiContext, token: string) {
  let principal;
  try {
    principal = await deps.authenticate(`Bearer ${token}`);
  } catch (err) {
    if (isGatewayError(err) && err.code === 'invalid_token') return; // §2.2: nothing to end
    throw err;
  }
  const { claims } = principal;
  await deps.sessions.revoke(claims);
  const family =
    claims.fid === undefined ? null : ((await deps.refreshTokens?.endFamily(claims.fid)) ?? null);
  namePrincipal(ctx, principal.kind, principal.userId, principal.tenantId);
  const { who, about } = tokenHolder(deps, ctx, principal);
  await deps.audit.record('token_revoked', who, {
    ...about,
    jti: claims.jti,
    ...(family === null ? {} : { family_id: family.familyId }),
  });
}

async function recordRevoked(deps: IdentityRouterDeps, ctx: ApiContext, family: RefreshFamily) {
  namePrincipal(ctx, 'user', family.userId, family.tenantId);
  const user = await deps.store.users.getUser(family.userId).catch(() => null);
  await deps.audit.record('token_revoked', actor(deps, ctx, user?.email ?? family.userId), {
    tenant_id: family.tenantId,
    user_id: family.userId,
    ...(user === null ? {} : { user_email: user.email }),
    family_id: family.familyId,
  });
}
