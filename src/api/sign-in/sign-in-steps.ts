/**
 * The steps of a sign-in on the page, in order: the password (the same
 * check as the Basic login: `identity/callers.ts` `provePassword`) or a
 * passkey (`passkey-step.ts`, both factors at once), then the
 * tenant (the one named, the user's only one, or a choice on a second page,
 * with the proven password kept as a pending record, never as a field),
 * then the session. A later step (a second factor, issue TOTP) goes between
 * the tenant and the session: it reads and writes the pending record as
 * the tenant choice does (`code-step.ts`).
 */
import type { SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import { sessionCookie } from '../../http/session-cookie.js';
import { cookieValues } from '../../text/cookies.js';
import { sessionCookieName } from '../../config/schema/sessions.js';
import { namePrincipal, noStore, provePassword } from '../identity/callers.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import { param, requiredParam } from '../identity/oauth-form.js';
import type { UserRecord } from '../../store/types.js';
import type { ApiContext } from '../state.js';
import type { SignInDeps } from './deps.js';
import {
  clearedPreSessionCookie,
  formTokenOf,
  newPreSession,
  preSessionCookie,
} from './form-token.js';
import { answerPage } from './page-headers.js';
import { putPending, takePending, type PendingSignIn } from './pending.js';
import type { SignInEcho } from './sign-in-view.js';
import { tenantChoicePage } from './sign-in-page.js';
import { hasTotp } from '../../auth/factors/admin-factor.js';
import { codePage } from './code-page.js';

/** One sign-in post, once its login-CSRF check passed. */
export interface SignInPost {
  deps: IdentityRouterDeps;
  signIn: SignInDeps;
  ctx: ApiContext;
  form: URLSearchParams;
  /** What a refusal's page shows again; a step fills in what it learns. */
  echo: SignInEcho;
  /** The browser's pre-session cookie's value: the pending record's key. */
  preSession: string;
}

/** Step 1: e-mail and password, then the tenant. */
export async function passwordStep(post: SignInPost): Promise<void> {
  const { deps, form } = post;
  const email = param(form, 'email');
  const password = param(form, 'password');
  if (email === undefined || email.trim() === '' || password === undefined || password === '')
    throw new GatewayError('invalid_request', 'Enter your e-mail and your password.');
  const user = await provePassword(deps, post.ctx, { email, password });
  if (await askForCode(post, user)) return;
  return tenantThenSession(post, user);
}

/**
 * The user proven (a password and, when they have one, the code: `code-step.ts`;
 * or a passkey, both factors: `passkey-step.ts`), the tenant next: the one the
 * page names, the user's only one, or a choice on a second page (the pending
 * record), then the session.
 */
export async function tenantThenSession(
  post: SignInPost,
  user: Pick<UserRecord, 'id' | 'email'>,
): Promise<void> {
  const { deps, echo } = post;
  if (echo.tenantId !== undefined && echo.tenantId !== '')
    return startSession(post, user.id, echo.tenantId);
  const tenants = await deps.store.memberships.listUserTenants(user.id);
  const [only, ...others] = tenants;
  if (only === undefined)
    throw new GatewayError('tenant_access_denied', 'The user is a member of no tenant.');
  if (others.length === 0) return startSession(post, user.id, only.tenantId);
  const formToken = await keepPending(post, {
    userId: user.id,
    email: user.email,
    returnTo: echo.returnTo,
  });
  answerPage(
    post.ctx,
    200,
    tenantChoicePage({
      tenants: tenants.map((t) => ({ tenantId: t.tenantId, name: t.name })),
      formToken,
    }),
  );
}

/**
 * After the password: when the user has a TOTP authenticator, keeps the sign-in
 * pending and shows the code page.
 * @returns whether the code page was shown (the sign-in waits for it)
 */
export async function askForCode(
  post: SignInPost,
  user: { id: string; email: string },
): Promise<boolean> {
  const { deps, echo } = post;
  if (deps.secondFactors === undefined || !(await hasTotp(deps.store, user.id))) return false;
  const formToken = await keepPending(post, {
    userId: user.id,
    email: user.email,
    returnTo: echo.returnTo,
    ...(echo.tenantId === undefined || echo.tenantId === '' ? {} : { tenantId: echo.tenantId }),
    codeNeeded: true,
  });
  post.signIn.onSignIn?.('code_needed');
  answerPage(post.ctx, 200, codePage({ formToken }));
  return true;
}

/**
 * Keeps the sign-in pending under a new pre-session cookie, set on this
 * answer, and gives the next page's form token: a value planted in the
 * browser before the password (a `Set-Cookie` of an app behind the gateway on
 * this host, a sibling host's without `__Host-`) never names a proven sign-in
 * (session fixation: a new id at each change of privilege).
 */
export async function keepPending(post: SignInPost, pending: PendingSignIn): Promise<string> {
  const preSession = newPreSession();
  await putPending(post.deps.store.sso, preSession, pending);
  post.ctx.append('set-cookie', preSessionCookie(post.signIn.config, preSession));
  post.preSession = preSession;
  return formTokenOf(preSession);
}

/** Step 2, when the user has several tenants: the one chosen. */
export async function tenantStep(post: SignInPost): Promise<void> {
  const pending = await takePending(post.deps.store.sso, post.preSession);
  // A record still waiting for its code is no proof: the tenant step never skips the code.
  if (pending === undefined || pending.codeNeeded === true)
    throw new GatewayError('invalid_request', 'This sign-in has expired. Please sign in again.', {
      detail: 'expired',
    });
  post.echo.returnTo = pending.returnTo;
  post.echo.email = pending.email;
  // A refusal shows the password form anew, not bound to the tenant refused.
  post.echo.tenantId = undefined;
  namePrincipal(post.ctx, 'user', pending.userId);
  await startSession(post, pending.userId, requiredParam(post.form, 'tenant_id'));
}

/**
 * The last step: a session cookie the browser had is ended (signing in as
 * someone else, or a planted one: the session id is always new), then the
 * new session, its cookie, the pre-session cookie cleared, 303 to `return_to`.
 */
async function startSession(post: SignInPost, userId: string, tenantId: string): Promise<void> {
  const { deps, signIn, ctx } = post;
  await endPresentSessions(signIn, ctx);
  const started = await signIn.browserSessions.start({
    userId,
    tenantId,
    userAgent: ctx.get('user-agent') || undefined,
    ip: deps.clientIp(ctx.req),
  });
  namePrincipal(ctx, 'user', userId, tenantId);
  ctx.append('set-cookie', sessionCookie(signIn.config, started.cookieValue));
  ctx.append('set-cookie', clearedPreSessionCookie(signIn.config));
  signIn.onSignIn?.('signed_in');
  noStore(ctx);
  ctx.status = 303;
  ctx.set('location', post.echo.returnTo);
  ctx.body = '';
}

/** Ends the sessions of the request's session cookies that prove one (a wrong one ends nothing). */
export async function endPresentSessions(signIn: SignInDeps, ctx: ApiContext): Promise<void> {
  const values = cookieValues(ctx.req.headers.cookie, sessionCookieName(signIn.config));
  for (const value of values) {
    const session = await presentSession(signIn, value);
    if (session !== undefined)
      await signIn.browserSessions.end(session.sessionId, 'sign_out', session.userId);
  }
}

/**
 * The live session a cookie's value proves, else undefined. A store that
 * cannot answer is not "no session": its error goes on (fail closed).
 */
export async function presentSession(
  signIn: SignInDeps,
  value: string,
): Promise<SessionPrincipal | undefined> {
  try {
    return await signIn.browserSessions.principal(value);
  } catch (err) {
    if (isGatewayError(err) && err.code === 'invalid_token') return undefined;
    throw err;
  }
}
