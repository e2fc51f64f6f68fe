/**
 * `DELETE /1/token`: log out; this token stops working at once, on every
 * instance — and when it was issued in a refresh family (`fid`), the family
 * ends with every token issued in it.
 */
import type { Router } from '@koa/router';
import type { ApiState } from '../state.js';
import { actor, bearer } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addLogoutRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.delete('/token', async (ctx) => {
    const principal = await bearer(deps, ctx);
    await deps.sessions.revoke(principal.claims);
    const { fid } = principal.claims;
    if (fid !== undefined) await deps.refreshTokens?.endFamily(fid);
    // A client's token names its client, not a user.
    const client = principal.kind === 'client';
    await deps.audit.record(
      'logout',
      actor(deps, ctx, client ? principal.userId : principal.email),
      {
        tenant_id: principal.tenantId,
        ...(client
          ? { client_id: principal.clientId }
          : { user_id: principal.userId, user_email: principal.email }),
        jti: principal.claims.jti,
        ...(fid === undefined ? {} : { family_id: fid }),
      },
    );
    ctx.status = 204;
  });
}
