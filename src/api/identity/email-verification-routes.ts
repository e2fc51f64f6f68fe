/**
 * The mailed e-mail verification link (`mail`; issue 45):
 * `GET /1/email-verifications/{token}` shows a page with a button and uses
 * nothing (a mail scanner's visit verifies nothing); `POST` of it verifies
 * the address, once (204, or for the button's form post a page).
 */
import type { Router } from '@koa/router';
import type { AccountMailDeps } from '../../identity/account-mail.js';
import { confirmEmail, verificationLinkUser } from '../../identity/email-verification.js';
import { confirmEmailPage, deadLinkPage, emailConfirmedPage } from '../sign-in/account-pages.js';
import { answerLinkPage } from '../sign-in/page-headers.js';
import type { ApiContext, ApiState } from '../state.js';
import { addLinkPageRoute, isFormPost, refuseAsLinkPage } from './account-input.js';
import { actor, namePrincipal, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addEmailVerificationRoutes(
  router: Router<ApiState>,
  deps: IdentityRouterDeps,
): void {
  const mail = deps.accountMail;
  if (mail === undefined) return;
  addLinkPageRoute(
    router,
    '/email-verifications',
    (token) => verificationLinkUser(mail, token),
    confirmEmailPage,
  );
  router.post('/email-verifications/:token', (ctx) => postVerification(deps, mail, ctx));
}

async function postVerification(
  deps: IdentityRouterDeps,
  mail: AccountMailDeps,
  ctx: ApiContext,
): Promise<void> {
  refuseAsLinkPage(ctx, (error) => deadLinkPage(error.message));
  const token = ctx.params.token as string;
  const user = await confirmEmail(mail, (email) => actor(deps, ctx, email), token);
  namePrincipal(ctx, 'user', user.id);
  noStore(ctx);
  if (isFormPost(ctx)) answerLinkPage(ctx, 200, emailConfirmedPage());
  else ctx.status = 204;
}
