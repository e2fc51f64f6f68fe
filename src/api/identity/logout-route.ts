/**
 * `DELETE /1/token`: log out; this token stops working at once, on every
 * instance — and when it was issued in a refresh family (`fid`), the family
 * ends with every token issued in it.
 */
import type { Router } from '@koa/router';
import type { ApiState } from '../state.js';
import { bearer, tokenHolder } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addLogoutRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.delete('/token', async (ctx) => {
    const principal = await bearer(deps, ctx);
    await deps.sessions.revoke(principal.claims);
    const { fid } = principal.claims;
    if (fid !== undefined) await deps.refreshTokens?.endFamily(fid);
    const { who, about } = tokenHolder(deps, ctx, principal);
    await deps.audit.record('logout', who, {
      ...about,
      jti: principal.claims.jti,
      ...(fid === undefined ? {} : { family_id: fid }),
    });
    ctx.status = 204;
  });
}
