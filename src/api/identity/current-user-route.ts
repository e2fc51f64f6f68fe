/**
 * `GET /1/users/current` (who the caller is, for a front end) and
 * `POST /1/sessions` (the browser session moved to another of the user's
 * tenants): the console's own needs, plain identity API a script can call
 * too. The operations are `identity/current-user.ts` and
 * `identity/tenant-switch.ts`.
 */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { sessionCookie } from '../../http/session-cookie.js';
import { currentUser } from '../../identity/current-user.js';
import { switchTenant } from '../../identity/tenant-switch.js';
import { userFactors, type UserFactors } from '../../identity/user-factors.js';
import { readJsonBody } from '../request-input.js';
import { SessionTenant } from '../schemas/current-user.js';
import type { ApiContext, ApiState } from '../state.js';
import { namePrincipal, noStore, sessionOrBearer } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addCurrentUserRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get('/users/current', async (ctx) => {
    const caller = await sessionOrBearer(deps, ctx);
    if (caller.kind === 'client')
      throw new GatewayError('forbidden', 'A machine client is no user.');
    const me = await currentUser(deps.store, caller);
    const factors = await userFactors(deps.store, caller.userId, {
      totp: deps.secondFactors !== undefined,
      passkeys: deps.passkeys !== undefined,
    });
    noStore(ctx);
    ctx.body = {
      user_id: me.userId,
      user_email: me.email,
      tenant_id: me.tenantId,
      tenant_name: me.tenantName,
      tenant_type: me.tenantType,
      role: me.role,
      scopes: me.scopes,
      tenants: me.tenants.map((t) => ({
        tenant_id: t.tenantId,
        type: t.type,
        name: t.name,
        role: t.role,
      })),
      second_factors: factorsAnswer(factors),
    };
  });
  router.post('/sessions', (ctx) => moveSession(deps, ctx));
}

/** `null`: the factor is off on this gateway. */
function factorsAnswer(factors: UserFactors) {
  return {
    totp:
      factors.totp === undefined
        ? null
        : {
            enrolled: factors.totp.enrolled,
            recovery_codes_left: factors.totp.recoveryCodesLeft,
          },
    passkeys: factors.passkeys === undefined ? null : { count: factors.passkeys.count },
  };
}

async function moveSession(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const { browserSessions, sessionsConfig } = deps;
  const caller = await sessionOrBearer(deps, ctx);
  if (caller.kind !== 'session' || browserSessions === undefined || sessionsConfig === undefined) {
    throw new GatewayError(
      'forbidden',
      'Only a browser session moves to another tenant; a token names its tenant: ask for one of the other tenant.',
    );
  }
  const { tenant_id: tenantId } = await readJsonBody(ctx, SessionTenant, deps.bodyLimit);
  const started = await switchTenant(
    { store: deps.store, browserSessions },
    {
      userId: caller.userId,
      sessionId: caller.sessionId,
      tenantId,
      userAgent: ctx.get('user-agent') || undefined,
      ip: deps.clientIp(ctx.req),
      requestId: ctx.state.scope.requestId,
    },
  );
  namePrincipal(ctx, 'session', caller.userId, tenantId);
  noStore(ctx);
  const { absoluteExpiresAt, createdAt } = started.session;
  ctx.append(
    'set-cookie',
    sessionCookie(sessionsConfig, started.cookieValue, Math.max(0, absoluteExpiresAt - createdAt)),
  );
  ctx.status = 204;
}
