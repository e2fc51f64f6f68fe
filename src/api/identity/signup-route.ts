/** `POST /1/users` (when `signup.enabled`): a new user and their personal tenant. */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { createUser } from '../../identity/users.js';
import { normaliseEmail } from '../../store/normalise.js';
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
    // The actor is the address as the account will have it.
    const self = { kind: 'self', audit: actor(deps, ctx, normaliseEmail(body.email)) } as const;
    const user = await createUser(deps, self, body);
    noStore(ctx);
    ctx.status = 201;
    ctx.body = signedUp(user);
  });
}
