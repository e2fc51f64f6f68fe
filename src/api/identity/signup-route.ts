/** `POST /1/users` (when `signup.enabled`): a new user and their personal tenant. */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { signedUp } from '../representations.js';
import { readJsonBody } from '../request-input.js';
import { SignupRequest } from '../schemas/users.js';
import type { ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addSignupRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.post('/users', async (ctx) => {
    if (!deps.signupEnabled) throw new GatewayError('forbidden', 'Signup is disabled.');
    await deps.bruteForce.signup(deps.clientIp(ctx.req));
    const body = await readJsonBody(ctx, SignupRequest, deps.bodyLimit);
    const user = await deps.accounts.signUp(body);
    await deps.audit.record('user_created', actor(deps, ctx, user.email), {
      tenant_id: user.personalTenantId,
      user_id: user.id,
      user_email: user.email,
    });
    noStore(ctx);
    ctx.status = 201;
    ctx.body = signedUp(user);
  });
}
