/**
 * `GET /1/token` and its OAuth alias `GET /1/oauth/token`: a bearer token for
 * one of the user's tenants. Its `scope` is the member's role's
 * (`authorization.roles`); a `scope` parameter is ignored — it can neither
 * widen nor narrow them, and the answer's `scope` says what was granted
 * (RFC 6749 §3.3). With `tokens.refresh.enabled` the login begins a refresh
 * family and the answer adds its first `refresh_token` (`auth/refresh/refresh-grant.ts`).
 */
import type { Router } from '@koa/router';
import { issued } from '../../identity/issued.js';
import { readQuery } from '../request-input.js';
import { TokenQuery } from '../schemas/token-operations.js';
import { loginToken } from '../token-representations.js';
import type { ApiContext, ApiState } from '../state.js';
import { issuingRequest, logIn, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { userGrant } from './oauth-answer.js';

export function addTokenRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const issueToken = (ctx: ApiContext) => issue(deps, ctx);
  router.get('/token', issueToken);
  router.get('/oauth/token', issueToken);
}

async function issue(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const { tenant_id: tenantId } = readQuery(ctx, TokenQuery);
  const user = await logIn(deps, ctx);
  const granted = await userGrant(deps, ctx)(user, tenantId);
  await issued(deps, issuingRequest(deps, ctx), { kind: 'user', granted, event: 'token_issued' });
  noStore(ctx);
  ctx.set('pragma', 'no-cache');
  ctx.body = loginToken(granted, granted.refreshToken);
}
