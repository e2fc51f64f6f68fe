/**
 * Who calls an identity endpoint: the Basic-authenticated user (with the
 * login audited and counted), the bearer's principal, and the audit actor of
 * a request; plus the answer headers every endpoint shares.
 */
import type { AuditActor, AuditSubject } from '../../audit/events.js';
import type { PrincipalKind, TokenPrincipal } from '../../auth/credentials/authenticate.js';
import type { PasswordCredentials } from '../../auth/accounts.js';
import { parseBasicAuthorization, type BasicCredentials } from '../../auth/credentials/basic.js';
import type { SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import { isSafeMethod, isSameOrigin, ownOrigin } from '../../http/same-origin.js';
import { cookieValues } from '../../text/cookies.js';
import { normaliseEmail } from '../../store/normalise.js';
import type { UserRecord } from '../../store/types.js';
import { requireVerifiedEmail } from '../../identity/email-verification.js';
import type { IssuingRequest } from '../../identity/issued.js';
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';
import { proveLoginFactor } from './second-factor-header.js';

/** The audit actor of a request acting as `email`. */
export function actor(deps: IdentityRouterDeps, ctx: ApiContext, email: string): AuditActor {
  return {
    source: 'api',
    actor: email,
    client_ip: deps.clientIp(ctx.req),
    request_id: ctx.state.scope.requestId,
  };
}

/**
 * Names who the request acted for, in its scope: the access line's user and
 * tenant and the request counter's `principal` label come from here together,
 * so a request that names a user is never counted as `principal="none"`.
 */
export function namePrincipal(
  ctx: ApiContext,
  kind: PrincipalKind,
  userId: string,
  tenantId?: string,
): void {
  const scope = ctx.state.scope;
  scope.userId = userId;
  if (tenantId !== undefined) scope.tenantId = tenantId;
  scope.kind = kind;
}

/** The request a token is issued to, for `identity/issued.ts`. */
export function issuingRequest(deps: IdentityRouterDeps, ctx: ApiContext): IssuingRequest {
  return {
    name: (kind, id, tenantId) => namePrincipal(ctx, kind, id, tenantId),
    actor: (who) => actor(deps, ctx, who),
  };
}

/**
 * Who a token's audit event is about, and by: a client's token names its
 * client (`client_id`, the client as actor), a user's token its user.
 */
export function tokenHolder(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  principal: TokenPrincipal,
): { who: AuditActor; about: AuditSubject } {
  if (principal.kind === 'client') {
    return {
      who: actor(deps, ctx, principal.userId),
      about: { tenant_id: principal.tenantId, client_id: principal.clientId },
    };
  }
  return {
    who: actor(deps, ctx, principal.email),
    about: {
      tenant_id: principal.tenantId,
      user_id: principal.userId,
      user_email: principal.email,
    },
  };
}

/** The Basic-authenticated user (with `X-OTP` when they have a second factor). */
export async function logIn(deps: IdentityRouterDeps, ctx: ApiContext): Promise<UserRecord> {
  let credentials: BasicCredentials;
  try {
    credentials = parseBasicAuthorization(ctx.get('authorization') || undefined);
  } catch (err) {
    // Unreadable credentials tried nobody's password: counted, not audited.
    deps.onLoginRefused?.('invalid_credentials');
    throw err;
  }
  const user = await provePassword(deps, ctx, {
    email: credentials.id,
    password: credentials.secret,
  });
  await proveLoginFactor(deps, ctx, user, actor(deps, ctx, user.email));
  return user;
}

/**
 * The user whose e-mail and password these are: the one password check of
 * the Basic login and the sign-in page (`accounts.logIn`: the same limits,
 * the same work for an unknown e-mail as for a wrong password), with the
 * login audited and counted the same way for both. With `signup.verifyEmail`,
 * a user whose address is not verified is refused only now, the password
 * proven right (a wrong one is `invalid_credentials`, whatever the address),
 * and mailed a new link (`identity/email-verification.ts`).
 * @throws GatewayError `invalid_credentials`, `too_many_requests`, `email_not_verified`
 */
export async function provePassword(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  credentials: PasswordCredentials,
): Promise<UserRecord> {
  try {
    const user = await deps.accounts.logIn(credentials, deps.clientIp(ctx.req), abandoned(ctx));
    namePrincipal(ctx, 'user', user.id);
    await requireVerifiedEmail(deps.accountMail, user);
    await deps.audit.record('login_succeeded', actor(deps, ctx, user.email), {
      user_id: user.id,
      user_email: user.email,
    });
    return user;
  } catch (err) {
    if (
      isGatewayError(err) &&
      (err.code === 'invalid_credentials' || err.code === 'too_many_requests')
    ) {
      deps.onLoginRefused?.(err.code);
      const email = normaliseEmail(credentials.email);
      const kind = err.code === 'invalid_credentials' ? 'login_failed' : 'login_locked_out';
      await deps.audit.record(kind, actor(deps, ctx, email), { user_email: email });
    }
    throw err;
  }
}

/** Basic-authenticated user whose id (or `current`) is in the path. */
export async function pathUser(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  userIdInPath: string,
): Promise<UserRecord> {
  const user = await logIn(deps, ctx);
  if (userIdInPath !== 'current' && userIdInPath !== user.id) {
    throw new GatewayError('forbidden', 'The path names another user.');
  }
  return user;
}

/** The bearer token's principal. */
export async function bearer(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TokenPrincipal> {
  const principal = await deps.authenticate(ctx.get('authorization') || undefined);
  namePrincipal(ctx, principal.kind, principal.userId, principal.tenantId);
  return principal;
}

/** Who calls an endpoint that takes a bearer token or the session cookie. */
export type SessionOrBearerCaller = TokenPrincipal | SessionPrincipal;

/**
 * The caller of an endpoint a browser reaches with its session cookie and a
 * program with a bearer token (the sessions API; the console and the
 * invitations next): the one place that says which credential counts.
 *
 * - An `Authorization` header: the bearer token, whatever cookie comes with
 *   it (a cross-site page cannot set the header, so no CSRF rule is needed).
 * - Else the session cookie, when browser sessions are on: sent twice (one
 *   set by a sibling host: cookie tossing) → 401 `invalid_token`, never a
 *   pick; an unsafe method not from the gateway's own origin (Fetch
 *   Metadata, else `Origin`; neither: refused) → 403 `csrf_refused`, before
 *   the session is looked at; then the session's principal.
 * - Neither: 401 `invalid_token`.
 * @throws GatewayError `invalid_token`, `csrf_refused`
 */
export async function sessionOrBearer(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<SessionOrBearerCaller> {
  const sessions = deps.browserSessions;
  const cookieName = deps.sessionCookieName;
  if (ctx.get('authorization') !== '' || sessions === undefined || cookieName === undefined) {
    return bearer(deps, ctx);
  }
  const values = cookieValues(ctx.req.headers.cookie, cookieName);
  if (values.length === 0) return bearer(deps, ctx);
  return cookieSession(deps, sessions, ctx, values);
}

/**
 * The caller of an endpoint only a browser session reaches (a passkey's
 * registration: a WebAuthn ceremony on the gateway's own origin): the
 * session cookie, by the rules of {@link sessionOrBearer}'s cookie; a bearer
 * token does not count (without the cookie: 401 `invalid_token`).
 * @throws GatewayError `invalid_token`, `csrf_refused`
 */
export async function sessionOnly(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<SessionPrincipal> {
  const sessions = deps.browserSessions;
  const cookieName = deps.sessionCookieName;
  const values =
    sessions === undefined || cookieName === undefined
      ? []
      : cookieValues(ctx.req.headers.cookie, cookieName);
  if (sessions === undefined || values.length === 0)
    throw new GatewayError('invalid_token', 'Sign in first: this takes a browser session.');
  return cookieSession(deps, sessions, ctx, values);
}

/** The session of the cookie's `values`: sent once, and same-origin for an unsafe method. */
async function cookieSession(
  deps: IdentityRouterDeps,
  sessions: NonNullable<IdentityRouterDeps['browserSessions']>,
  ctx: ApiContext,
  values: string[],
): Promise<SessionPrincipal> {
  if (values.length > 1)
    throw new GatewayError('invalid_token', 'The session cookie was sent more than once.');
  if (!isSafeMethod(ctx.method) && !isSameOrigin(ctx.req.headers, requestOrigin(deps, ctx))) {
    throw new GatewayError(
      'csrf_refused',
      'A request with the session cookie that changes something must come from this origin.',
    );
  }
  const principal = await sessions.principal(values[0] as string);
  namePrincipal(ctx, 'session', principal.userId, principal.tenantId);
  return principal;
}

/**
 * The origin the request was addressed to, as a browser writes `Origin`
 * (`publicUrl`, or the validated Host behind trusted proxies); undefined when
 * it has none a URL can hold, which no `Origin` then matches.
 */
function requestOrigin(deps: IdentityRouterDeps, ctx: ApiContext): string | undefined {
  try {
    const origin = new URL(deps.publicOrigin?.(ctx.req) ?? `${ctx.protocol}://${ctx.get('host')}`);
    return ownOrigin(origin.protocol === 'https:' ? 'https' : 'http', origin.host);
  } catch {
    return undefined;
  }
}

/** Aborts when the client hangs up before the response is written. */
function abandoned(ctx: ApiContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function noStore(ctx: ApiContext): void {
  ctx.set('cache-control', 'no-store');
}
