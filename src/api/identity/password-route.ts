/** `PUT /1/users/:user_id/password`: a new password; every token of the user stops working at once. */
import type { Router } from '@koa/router';
import { readJsonBody } from '../request-input.js';
import { PasswordChange } from '../schemas/users.js';
import type { ApiState } from '../state.js';
import { actor, pathUser } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addPasswordRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.put('/users/:user_id/password', async (ctx) => {
    const user = await pathUser(deps, ctx, ctx.params.user_id as string);
    const body = await readJsonBody(ctx, PasswordChange, deps.bodyLimit);
    await deps.accounts.changePassword(user, body.password);
    await deps.audit.record('password_changed', actor(deps, ctx, user.email), {
      user_id: user.id,
      user_email: user.email,
    });
    ctx.status = 204;
  });
}
