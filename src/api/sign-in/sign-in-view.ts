/**
 * Showing the password form: with the browser's pre-session cookie (kept
 * when it has a good one, else a new one set) and the form token bound to
 * it. The GET page and every refusal rendered as a page come through here,
 * so a refused post always leaves a form that can be sent again.
 */
import { isGatewayError, type GatewayError } from '../../errors.js';
import type { ApiContext } from '../state.js';
import type { SignInDeps } from './deps.js';
import { formTokenOf, newPreSession, preSessionCookie, readPreSession } from './form-token.js';
import { messageFor } from './messages.js';
import { HOME } from './return-to.js';
import { signInPage } from './sign-in-page.js';

/** What a sign-in page echoes back: known so far of the request. */
export interface SignInEcho {
  returnTo: string;
  tenantId?: string | undefined;
  email?: string | undefined;
}

export function emptyEcho(): SignInEcho {
  return { returnTo: HOME };
}

/** The password form's HTML, `error` (when given) shown as its alert. */
export function renderSignIn(
  deps: SignInDeps,
  ctx: ApiContext,
  echo: SignInEcho,
  error?: GatewayError,
  notice?: string,
): string {
  let preSession = readPreSession(ctx.req.headers, deps.config);
  if (preSession === undefined) preSession = newPreSession();
  if (deps.passkeys === true) ctx.state.pageScript = true;
  // Set again when kept: its ten minutes start anew with the page.
  ctx.append('set-cookie', preSessionCookie(deps.config, preSession));
  return signInPage({
    returnTo: echo.returnTo,
    tenantId: echo.tenantId,
    email: echo.email,
    formToken: formTokenOf(preSession),
    error: isGatewayError(error) ? messageFor(error) : notice,
    company: deps.company,
    passkeys: deps.passkeys,
    passwordReset: deps.passwordReset === true,
  });
}

/** Makes the request's refusals render as the password form (for a browser), echoing `echo`. */
export function refuseAsPage(deps: SignInDeps, ctx: ApiContext, echo: SignInEcho): void {
  ctx.state.page = (error) => renderSignIn(deps, ctx, echo, error);
}
