/** `PUT /1/users/:user_id/password`: a new password; every token of the user stops working at once. */
import type { Router } from '@koa/router';
import { changePassword } from '../../identity/users.js';
import { readJsonBody } from '../request-input.js';
import { PasswordChange } from '../schemas/users.js';
import type { ApiState } from '../state.js';
import { actor, pathUser } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addPasswordRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.put('/users/:user_id/password', async (ctx) => {
    const user = await pathUser(deps, ctx, ctx.params.user_id as string);
    const body = await readJsonBody(ctx, PasswordChange, deps.bodyLimit);
    const self = { kind: 'self', audit: actor(deps, ctx, user.email) } as const;
    await changePassword(deps, self, user, body.password);
    ctx.status = 204;
  });
}
