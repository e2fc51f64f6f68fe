/**
 * "Sign in with your company" into a browser session (issue 44; `sso.enabled`
 * and `sessions.enabled`):
 *
 * - `GET /1/sign-in/sso?email=…&return_to=…` (or `tenant_id=…` instead of the
 *   e-mail), the sign-in page's form: the tenant that has verified the
 *   e-mail's domain and whose IdP lists it (`auth/federation/company-idp.ts`),
 *   then the browser sign-in in session mode — 302 to the provider with the
 *   binding cookie, as `GET /1/tenants/{t}/sso/login` does. No such tenant:
 *   303 back to `/1/sign-in?return_to=…&error=no_company_sign_in`, no provider
 *   asked. Throttled as that login: a point of `limits.ssoLogin` and of
 *   `limits.exchange` per client IP first.
 * - the callback (`sso-routes.ts`) of such a sign-in, once the provider's
 *   answer passed every check of the code mode: {@link finishInSession}.
 */
import type { Router } from '@koa/router';
import { PENDING_TTL_SECONDS, type FinishResult } from '../../auth/federation/browser-sign-in.js';
import { companyTenantFor } from '../../auth/federation/company-idp.js';
import { rememberIdpSession } from '../../auth/federation/idp-session-index.js';
import { GatewayError } from '../../errors.js';
import { sessionCookie } from '../../http/session-cookie.js';
import type { ApiContext, ApiState } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';
import { bindingCookie, one, redirect, SSO_CALLBACK_PATH } from './sso-browser-http.js';
import { safeReturnTo } from '../sign-in/return-to.js';

export const COMPANY_SIGN_IN_PATH = '/1/sign-in/sso';

/** The sign-in page, which shows `error`. */
const SIGN_IN_PAGE = '/1/sign-in';

export function addCompanySignInRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const { browserSignIn: signIn, publicOrigin: origin, browserSessions, sessionsConfig } = deps;
  if (
    signIn === undefined ||
    origin === undefined ||
    browserSessions === undefined ||
    sessionsConfig === undefined
  )
    return;
  router.get('/sign-in/sso', async (ctx) => {
    const ip = deps.clientIp(ctx.req);
    await deps.bruteForce.ssoLogin(ip);
    await deps.bruteForce.exchange(ip);
    const returnTo = safeReturnTo(one(ctx, 'return_to'), sessionsConfig);
    const tenantId = await tenantAsked(deps, ctx);
    if (tenantId === null) {
      const back = new URLSearchParams({ return_to: returnTo, error: 'no_company_sign_in' });
      return redirect(ctx, `${SIGN_IN_PAGE}?${back}`, 303);
    }
    const callbackOrigin = origin(ctx.req);
    const { location, state, binding } = await signIn.startSession({
      tenantId,
      returnTo,
      callbackUrl: `${callbackOrigin}${SSO_CALLBACK_PATH}`,
    });
    ctx.append('set-cookie', bindingCookie(state, binding, callbackOrigin, PENDING_TTL_SECONDS));
    redirect(ctx, location);
  });
}

/** `tenant_id` when it has an IdP, else the e-mail's company; null when neither leads to one. */
async function tenantAsked(deps: IdentityRouterDeps, ctx: ApiContext): Promise<string | null> {
  const tenantId = one(ctx, 'tenant_id');
  if (tenantId !== undefined && tenantId !== '')
    return (await deps.store.idps.getTenantIdp(tenantId)) === null ? null : tenantId;
  const email = one(ctx, 'email');
  return email === undefined ? null : companyTenantFor(deps.store, email);
}

type SignedIn = NonNullable<FinishResult['signedIn']>;

/**
 * The callback's end in session mode: the provider's `sub` and `sid` recorded
 * against the user first (so a back-channel logout can find every session
 * begun: none exists that it could not end), then the session begun
 * (`BrowserSessions.start`, audited `session_started`), then 303 to the
 * return path with the session cookie.
 */
export async function finishInSession(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  done: SignedIn,
  session: NonNullable<FinishResult['session']>,
): Promise<void> {
  const { browserSessions, sessionsConfig } = deps;
  // Fail closed: a session-mode sign-in on a gateway without sessions begins nothing.
  if (browserSessions === undefined || sessionsConfig === undefined)
    throw new GatewayError('invalid_request', 'Browser sessions are not enabled.');
  const idp = {
    issuer: done.idp.issuer,
    subject: session.subject,
    ...(session.sid === undefined ? {} : { sid: session.sid }),
  };
  const ttl = sessionsConfig.absoluteTimeoutSeconds;
  await rememberIdpSession(deps.store.sso, { tenantId: done.tenantId, ...idp }, done.userId, ttl);
  const userAgent = ctx.get('user-agent');
  const started = await browserSessions.start({
    userId: done.userId,
    tenantId: done.tenantId,
    userAgent: userAgent === '' ? undefined : userAgent,
    ip: deps.clientIp(ctx.req),
    idp,
  });
  ctx.append('set-cookie', sessionCookie(sessionsConfig, started.cookieValue));
  redirect(ctx, session.returnTo, 303);
}
