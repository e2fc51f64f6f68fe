/** `POST /1/users` (when `signup.enabled`): a new user and their personal tenant. */
import type { Router } from '@koa/router';
import { z } from 'zod';
import { GatewayError } from '../../errors.js';
import { createUser } from '../../identity/users.js';
import { normaliseEmail } from '../../store/normalise.js';
import { readJsonBody } from '../request-input.js';
import type { ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

const signupBody = z.strictObject({
  email: z.string(),
  password: z.string(),
  name: z.string().max(200).optional(),
});

export function addSignupRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.post('/users', async (ctx) => {
    if (!deps.signupEnabled) throw new GatewayError('forbidden', 'Signup is disabled.');
    await deps.bruteForce.signup(deps.clientIp(ctx.req));
    const body = await readJsonBody(ctx, signupBody, deps.bodyLimit);
    // The actor is the address as the account will have it.
    const self = { kind: 'self', audit: actor(deps, ctx, normaliseEmail(body.email)) } as const;
    const user = await createUser(deps, self, body);
    noStore(ctx);
    ctx.status = 201;
    ctx.body = { user_id: user.id, user_email: user.email, tenant_id: user.personalTenantId };
  });
}
