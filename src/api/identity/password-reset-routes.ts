/**
 * The password reset (`mail`; issue 45):
 *
 * - `GET /1/password-resets`: the "forgot your password" page (an e-mail form);
 * - `POST /1/password-resets {email}`: 202, the same answer for every address
 *   (`identity/password-reset.ts` looks it up only after the answer);
 * - `GET /1/password-resets/{token}`: the mailed link's new-password form (uses nothing);
 * - `POST /1/password-resets/{token} {password}`: 204, every session of the user ended.
 *
 * The pages' form posts are answered with pages; a refusal is shown on the
 * page it came from.
 */
import type { Router } from '@koa/router';
import type { AccountMailDeps } from '../../identity/account-mail.js';
import {
  requestPasswordReset,
  resetLinkUser,
  resetPassword,
} from '../../identity/password-reset.js';
import { passwordResetRequested } from '../representations.js';
import { PasswordReset, PasswordResetRequest } from '../schemas/accounts.js';
import {
  deadLinkPage,
  forgotPasswordPage,
  newPasswordPage,
  passwordResetPage,
  resetRequestedPage,
} from '../sign-in/account-pages.js';
import { messageFor } from '../sign-in/messages.js';
import { answerLinkPage, answerPage } from '../sign-in/page-headers.js';
import type { ApiContext, ApiState } from '../state.js';
import { addLinkPageRoute, isFormPost, readJsonOrForm, refuseAsLinkPage } from './account-input.js';
import { actor, namePrincipal, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addPasswordResetRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const mail = deps.accountMail;
  if (mail === undefined) return;
  router.get('/password-resets', (ctx) => answerPage(ctx, 200, forgotPasswordPage()));
  router.post('/password-resets', (ctx) => postResetRequest(deps, mail, ctx));
  addLinkPageRoute(
    router,
    '/password-resets',
    (token) => resetLinkUser(mail, token),
    (token) => newPasswordPage(token),
  );
  router.post('/password-resets/:token', (ctx) => postReset(deps, mail, ctx));
}

async function postResetRequest(
  deps: IdentityRouterDeps,
  mail: AccountMailDeps,
  ctx: ApiContext,
): Promise<void> {
  ctx.state.page = (error) => forgotPasswordPage(messageFor(error));
  const body = await readJsonOrForm(ctx, PasswordResetRequest, deps.bodyLimit);
  const request = {
    clientIp: deps.clientIp(ctx.req),
    actorOf: (email: string) => actor(deps, ctx, email),
  };
  await requestPasswordReset(mail, request, body.email);
  noStore(ctx);
  if (isFormPost(ctx)) return answerPage(ctx, 202, resetRequestedPage());
  ctx.status = 202;
  ctx.body = passwordResetRequested();
}

async function postReset(
  deps: IdentityRouterDeps,
  mail: AccountMailDeps,
  ctx: ApiContext,
): Promise<void> {
  const token = ctx.params.token as string;
  refuseAsLinkPage(ctx, (error) =>
    error.code === 'not_found'
      ? deadLinkPage(error.message)
      : newPasswordPage(token, messageFor(error)),
  );
  const body = await readJsonOrForm(ctx, PasswordReset, deps.bodyLimit);
  const user = await resetPassword(mail, (email) => actor(deps, ctx, email), token, body.password);
  namePrincipal(ctx, 'user', user.id);
  noStore(ctx);
  if (isFormPost(ctx)) answerLinkPage(ctx, 200, passwordResetPage());
  else ctx.status = 204;
}
