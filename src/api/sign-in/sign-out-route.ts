/**
 * `POST /1/sign-out` (`sessions.enabled`): a form posted from a page of this
 * origin (the same-origin rule, else 403 `csrf_refused`: another site must
 * not end a person's session). The session its cookie proves is ended on
 * every instance (`BrowserSessions.end`), the cookie is cleared, and the
 * browser is sent 303 to `return_to` (checked: `return-to.ts`) or to the
 * sign-in page — or, for a session begun at a tenant's IdP that offers it,
 * to the IdP's end-session endpoint (`endAtIdp`). Without a live session it
 * still clears the cookie and answers the same 303: signing out twice is
 * not an error.
 */
import type { Router } from '@koa/router';
import type { SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import { clearedSessionCookie } from '../../http/session-cookie.js';
import { sessionCookieName } from '../../config/schema/sessions.js';
import { GatewayError } from '../../errors.js';
import { isSameOrigin } from '../../http/same-origin.js';
import { cookieValues } from '../../text/cookies.js';
import { namePrincipal, noStore } from '../identity/callers.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import { param, readForm } from '../identity/oauth-form.js';
import type { ApiContext, ApiState } from '../state.js';
import type { SignInDeps } from './deps.js';
import { requestOrigin } from './request-origin.js';
import { HOME, safeReturnTo } from './return-to.js';
import { presentSession } from './sign-in-steps.js';
import { SIGN_IN_PATH } from './sign-in-page.js';
import { emptyEcho, refuseAsPage } from './sign-in-view.js';

export function addSignOutRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const signIn = deps.signIn;
  if (signIn === undefined) return;
  router.post('/sign-out', (ctx) => signOut(deps, signIn, ctx));
}

async function signOut(
  deps: IdentityRouterDeps,
  signIn: SignInDeps,
  ctx: ApiContext,
): Promise<void> {
  refuseAsPage(signIn, ctx, emptyEcho());
  if (!isSameOrigin(ctx.req.headers, requestOrigin(deps.publicOrigin, ctx.req)))
    throw new GatewayError('csrf_refused', 'The sign-out was posted from another site.');
  const form = ctx.is('application/x-www-form-urlencoded')
    ? await readForm(ctx, deps.bodyLimit)
    : new URLSearchParams();
  const asked = safeReturnTo(param(form, 'return_to'), signIn.config);
  let location = param(form, 'return_to') === undefined && asked === HOME ? SIGN_IN_PATH : asked;
  const values = cookieValues(ctx.req.headers.cookie, sessionCookieName(signIn.config));
  for (const value of values) {
    const session = await presentSession(signIn, value);
    if (session === undefined) continue;
    namePrincipal(ctx, 'user', session.userId, session.tenantId);
    location = (await idpLocation(signIn, ctx, session)) ?? location;
    await signIn.browserSessions.end(session.sessionId, 'sign_out', session.userId);
  }
  ctx.append('set-cookie', clearedSessionCookie(signIn.config));
  noStore(ctx);
  ctx.status = 303;
  ctx.set('location', location);
  ctx.body = '';
}

/**
 * Where the session's IdP ends its own session (RP-initiated logout), asked
 * before the session ends (its record holds the IdP's hint). An IdP that
 * cannot be reached does not keep the session here alive: logged, and the
 * browser goes where it would without one.
 */
async function idpLocation(
  signIn: SignInDeps,
  ctx: ApiContext,
  session: SessionPrincipal,
): Promise<string | undefined> {
  if (signIn.endAtIdp === undefined) return undefined;
  try {
    return await signIn.endAtIdp(session);
  } catch (err) {
    ctx.state.scope.log.warn({ err }, 'sign-out: the IdP end-session URL failed');
    return undefined;
  }
}
