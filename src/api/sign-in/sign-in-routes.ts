/**
 * The sign-in page (`sessions.enabled`; issue 44):
 *
 * - `GET /1/sign-in?return_to=…[&tenant_id=…]`: the password form, with a
 *   pre-session cookie and the form token bound to it (`form-token.ts`).
 * - `POST /1/sign-in`: the login-CSRF rule, then the steps
 *   (`sign-in-steps.ts`): password → tenant → session; 303 to `return_to`
 *   with the session cookie. A refusal is the page again with its status
 *   for a browser (`Accept: text/html`), the JSON error otherwise: one
 *   `GatewayError`, rendered by `renderErrors`.
 * - `GET /1/sign-in/style.<digest>.css`: the pages' stylesheet (the account
 *   pages' too: `addStylesheetRoute`).
 * - with passkeys on, `step=passkey` signs in with one (`passkey-step.ts`),
 *   and the page's script and options (`passkey-sign-in-routes.ts`).
 */
import type { Router } from '@koa/router';
import { GatewayError, isGatewayError } from '../../errors.js';
import { companyNotice } from './messages.js';
import type { SignInOutcome } from '../../ops/sign-in-outcomes.js';
import { readQuery } from '../request-input.js';
import { SignInQuery } from '../schemas/sign-in-operations.js';
import type { ApiContext, ApiState } from '../state.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import { param, readForm } from '../identity/oauth-form.js';
import type { SignInDeps } from './deps.js';
import { checkSignInPost } from './form-token.js';
import { answerPage } from './page-headers.js';
import { requestOrigin } from './request-origin.js';
import { safeReturnTo } from './return-to.js';
import { codeStep } from './code-step.js';
import { passkeyStep } from './passkey-step.js';
import { addPasskeySignInRoutes } from './passkey-sign-in-routes.js';
import { passwordStep, tenantStep, type SignInPost } from './sign-in-steps.js';
import { emptyEcho, refuseAsPage, renderSignIn } from './sign-in-view.js';
import { addStaticAsset } from './static-asset.js';
import { STYLESHEET, STYLESHEET_ETAG, STYLESHEET_ROUTE } from './stylesheet.js';

export function addSignInRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const signIn = deps.signIn;
  if (signIn === undefined) return;
  router.get('/sign-in', (ctx) => showSignIn(signIn, ctx));
  router.post('/sign-in', (ctx) => postSignIn(deps, signIn, ctx));
  addPasskeySignInRoutes(router, deps);
}

/** The pages' stylesheet: with the sign-in page or the account pages (`mail`). */
export function addStylesheetRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  if (deps.signIn === undefined && deps.accountMail === undefined) return;
  addStaticAsset(router, {
    route: STYLESHEET_ROUTE,
    bytes: STYLESHEET,
    etag: STYLESHEET_ETAG,
    type: 'text/css; charset=utf-8',
  });
}

function showSignIn(signIn: SignInDeps, ctx: ApiContext): void {
  const echo = emptyEcho();
  refuseAsPage(signIn, ctx, echo);
  const query = readQuery(ctx, SignInQuery);
  echo.returnTo = safeReturnTo(query.return_to, signIn.config);
  echo.tenantId = query.tenant_id;
  const notice = companyNotice(query.error);
  answerPage(ctx, 200, renderSignIn(signIn, ctx, echo, undefined, notice));
}

async function postSignIn(
  deps: IdentityRouterDeps,
  signIn: SignInDeps,
  ctx: ApiContext,
): Promise<void> {
  const echo = emptyEcho();
  refuseAsPage(signIn, ctx, echo);
  try {
    const form = await readForm(ctx, deps.bodyLimit);
    echo.returnTo = safeReturnTo(param(form, 'return_to'), signIn.config);
    echo.email = param(form, 'email');
    echo.tenantId = param(form, 'tenant_id');
    const own = requestOrigin(deps.publicOrigin, ctx.req);
    const preSession = checkSignInPost(
      ctx.req.headers,
      own,
      param(form, 'csrf_token'),
      signIn.config,
    );
    const post = { deps, signIn, ctx, form, echo, preSession };
    await stepOf(post)(post);
  } catch (err) {
    signIn.onSignIn?.(outcomeOf(err));
    throw err;
  }
}

/** The step the form posts: the tenant choice, the code, a passkey (where they are on), else the password. */
function stepOf(post: SignInPost): (post: SignInPost) => Promise<void> {
  const step = param(post.form, 'step');
  if (step === 'tenant') return tenantStep;
  if (step === 'code') return codeStep;
  const passkeys = post.deps.passkeys;
  if (step === 'passkey' && passkeys !== undefined) return (p) => passkeyStep(p, passkeys);
  return passwordStep;
}

function outcomeOf(err: unknown): SignInOutcome {
  if (!isGatewayError(err)) return 'unavailable';
  const byCode: Partial<Record<GatewayError['code'], SignInOutcome>> = {
    invalid_credentials: 'wrong_credentials',
    mfa_required: 'wrong_code',
    too_many_requests: 'throttled',
    csrf_refused: 'csrf_refused',
    tenant_access_denied: 'not_member',
    email_not_verified: 'email_not_verified',
  };
  if (err.detail === 'expired') return 'expired';
  return byCode[err.code] ?? (err.status >= 500 ? 'unavailable' : 'invalid_request');
}
