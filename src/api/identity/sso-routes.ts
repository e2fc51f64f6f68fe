/**
 * The browser sign-in through a tenant's identity provider (`sso.enabled`;
 * `auth/federation/browser-sign-in.ts`):
 *
 * - `GET /1/tenants/{tenant_id}/sso/login?redirect_uri=…&code_challenge=…&code_challenge_method=S256[&state=…]`:
 *   302 to the provider, with a cookie binding the sign-in to this browser
 *   (path `/1/sso/callback`, HttpOnly, SameSite=Lax). An unregistered
 *   `redirect_uri` is a 400, never a redirect.
 * - `GET /1/sso/callback?state=…&code=…`: the provider's answer; 302 to the
 *   application's `redirect_uri` with a one-time `code` (and its `state`). An
 *   unknown, used or expired state, or a callback without the sign-in's
 *   cookie, is a 400, never a redirect; a refusal of
 *   the provider's code or ID token is one `invalid_grant` (400), audited with
 *   its reason.
 *
 * The code is redeemed at `POST /1/oauth/token` (`oauth-code-grant.ts`).
 * A sign-in begun by the sign-in page (`GET /1/sign-in/sso`,
 * `company-sign-in-route.ts`) ends instead in a browser session: 303 to its
 * return path with the session cookie.
 * Both endpoints take a point of `limits.exchange` per client IP (the login
 * one of `limits.ssoLogin` too) before the provider is asked: past it 429.
 */
import type { Router } from '@koa/router';
import { PENDING_TTL_SECONDS, type BrowserSignIn } from '../../auth/federation/browser-sign-in.js';
import type { ExchangeSeen } from '../../auth/federation/exchange.js';
import { refusalOf } from '../../auth/federation/refusals.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, namePrincipal } from './callers.js';
import { finishInSession } from './company-sign-in-route.js';
import type { IdentityRouterDeps } from './deps.js';
import {
  bindingCookie,
  bindingCookieName,
  one,
  redirect,
  SSO_CALLBACK_PATH,
} from './sso-browser-http.js';

export { SSO_CALLBACK_PATH } from './sso-browser-http.js';

export function addSsoRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const signIn = deps.browserSignIn;
  const origin = deps.publicOrigin;
  if (signIn === undefined || origin === undefined) return;
  router.get('/tenants/:tenantId/sso/login', async (ctx) => {
    const ip = deps.clientIp(ctx.req);
    await deps.bruteForce.ssoLogin(ip);
    await deps.bruteForce.exchange(ip);
    const callbackOrigin = origin(ctx.req);
    const { location, state, binding } = await signIn.start({
      tenantId: ctx.params['tenantId'] as string,
      redirectUri: one(ctx, 'redirect_uri', true) as string,
      appState: one(ctx, 'state'),
      codeChallenge: one(ctx, 'code_challenge'),
      codeChallengeMethod: one(ctx, 'code_challenge_method'),
      callbackUrl: `${callbackOrigin}${SSO_CALLBACK_PATH}`,
    });
    ctx.append('set-cookie', bindingCookie(state, binding, callbackOrigin, PENDING_TTL_SECONDS));
    redirect(ctx, location);
  });
  router.get('/sso/callback', (ctx) => callback(deps, signIn, ctx));
}

async function callback(
  deps: IdentityRouterDeps,
  signIn: BrowserSignIn,
  ctx: ApiContext,
): Promise<void> {
  // Before the state is spent: a throttled callback may be retried.
  await deps.bruteForce.exchange(deps.clientIp(ctx.req));
  const state = one(ctx, 'state', true) as string;
  const binding = ctx.cookies.get(bindingCookieName(state)) ?? undefined;
  // Spent whatever the outcome: the state is single use.
  ctx.append('set-cookie', bindingCookie(state, '', deps.publicOrigin?.(ctx.req) ?? '', 0));
  const seen: ExchangeSeen & { tenantId?: string } = {};
  let result;
  try {
    const input = { state, binding, code: one(ctx, 'code'), error: one(ctx, 'error') };
    result = await signIn.finish(input, seen);
  } catch (err) {
    await recordRefusal(deps, ctx, seen, err);
    const reason = refusalOf(err);
    // The exchange's description names a subject token; here there is none.
    if (reason !== undefined)
      throw new GatewayError(
        'invalid_grant',
        "The sign-in at the tenant's identity provider is not accepted.",
        { detail: reason, cause: err },
      );
    throw err;
  }
  const done = result.signedIn;
  if (done !== undefined) {
    namePrincipal(ctx, 'user', done.userId, done.tenantId);
    deps.onFederatedSignIn?.(done.outcome);
    const who = actor(deps, ctx, done.email);
    const about = { tenant_id: done.tenantId, user_id: done.userId, user_email: done.email };
    const via = 'browser' as const;
    if (done.outcome === 'user_created')
      await deps.audit.record('federated_user_created', who, {
        ...about,
        issuer: done.idp.issuer,
        via,
      });
    if (done.outcome !== 'signed_in')
      await deps.audit.record('federated_member_joined', who, {
        ...about,
        role: done.idp.role,
        via,
        ...(done.linked ? { linked: true } : {}),
        ...(done.passwordEnded ? { password_ended: true } : {}),
      });
    await deps.audit.record('federated_sign_in', who, { ...about, issuer: done.idp.issuer, via });
    if (result.session !== undefined) return finishInSession(deps, ctx, done, result.session);
  }
  // A session-mode sign-in came from the sign-in page: 303 as its form's answers are.
  redirect(ctx, result.location, result.mode === 'session' ? 303 : 302);
}

async function recordRefusal(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  seen: ExchangeSeen & { tenantId?: string },
  err: unknown,
): Promise<void> {
  const reason = refusalOf(err);
  const unavailable = isGatewayError(err) && err.code === 'unavailable';
  if ((reason === undefined && !unavailable) || seen.tenantId === undefined) return;
  deps.onFederatedSignIn?.(reason ?? 'unavailable');
  await deps.audit.record(
    'federated_sign_in_refused',
    actor(deps, ctx, seen.email ?? 'unverified'),
    {
      tenant_id: seen.tenantId,
      ...(seen.email === undefined ? {} : { user_email: seen.email }),
      ...(seen.issuer === undefined ? {} : { issuer: seen.issuer }),
      reason: reason ?? 'unavailable',
      via: 'browser',
    },
  );
}
