/**
 * `POST /1/sso/backchannel-logout` (OpenID Connect Back-Channel Logout 1.0,
 * issue 44; `sso.enabled` and `sessions.enabled`): a tenant's identity
 * provider posts a logout token (form `logout_token`, §2.5) when a user's
 * session there ends; the user's browser sessions begun at that provider end
 * on every instance before the answer (`auth/federation/backchannel-logout.ts`).
 *
 * Answers (§2.8): 200 with `Cache-Control: no-store` (also when no session of
 * that user is known here: there is nothing left to end); 400
 * `invalid_request` for a token that does not validate or was seen before,
 * ending nothing; 503 when the provider's keys cannot be had (it may retry).
 * Each logout is audited (`backchannel_logout`, with the number of sessions
 * ended), each refusal of a token of a known tenant's provider too
 * (`backchannel_logout_refused`, with its reason). The token itself is never
 * logged or audited.
 */
import type { Router } from '@koa/router';
import { logoutRefusalOf } from '../../auth/federation/logout-token.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, namePrincipal, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { readForm, requiredParam } from './oauth-form.js';

export const BACKCHANNEL_LOGOUT_PATH = '/1/sso/backchannel-logout';

export function addBackchannelLogoutRoute(
  router: Router<ApiState>,
  deps: IdentityRouterDeps,
): void {
  const logout = deps.backchannelLogout;
  if (logout === undefined) return;
  router.post('/sso/backchannel-logout', async (ctx) => {
    noStore(ctx);
    const form = await readForm(ctx, deps.bodyLimit);
    const token = requiredParam(form, 'logout_token');
    const seen: { tenantId?: string; issuer?: string } = {};
    let done;
    try {
      done = await logout(token, seen);
    } catch (err) {
      await recordRefusal(deps, ctx, seen, err);
      throw err;
    }
    if (done.userId !== undefined) namePrincipal(ctx, 'user', done.userId, done.tenantId);
    await deps.audit.record('backchannel_logout', actor(deps, ctx, done.issuer), {
      tenant_id: done.tenantId,
      ...(done.userId === undefined ? {} : { user_id: done.userId }),
      issuer: done.issuer,
      sessions_ended: done.ended,
    });
    ctx.status = 200;
    ctx.body = '';
  });
}

/** A refusal of a token that named a tenant's provider (else there is no tenant to tell). */
async function recordRefusal(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  seen: { tenantId?: string; issuer?: string },
  err: unknown,
): Promise<void> {
  const reason = logoutRefusalOf(err);
  if (reason === undefined || seen.tenantId === undefined || seen.issuer === undefined) return;
  await deps.audit.record('backchannel_logout_refused', actor(deps, ctx, seen.issuer), {
    tenant_id: seen.tenantId,
    issuer: seen.issuer,
    reason,
  });
}
