/**
 * Browser sessions (issue 44): the record behind a session cookie, begun at
 * sign-in, recognised on every request of an `auth: session` route, ended by
 * sign-out and by everything that ends a token. The contract the sign-in
 * page, the admission pipeline, the sessions API and the CLI build on; made
 * by `createBrowserSessions` (`session-service.ts`).
 *
 * The cookie's value is `<session id>.<secret>`: the id names the record
 * (public: listed, deny-listed), the secret proves the holder (32 random
 * bytes, kept only as its SHA-256). A session is judged alive exactly as a
 * token is — by the session guard (`../revocation/sessions.ts`), from
 * claims made of its record (`sub`, `tenant_id`, `sv`, `mg`, `jti` = the
 * session id) — so a password change, disable, removal, member removal,
 * role change or sign-out ends it on every instance before the answer, and
 * a steady stream of requests costs no store call.
 */
import type { AuditActor } from '../../audit/events.js';
import type { TenantType } from '../../store/types.js';
import type { BrowserSessionRecord } from '../../store/browser-sessions.js';
import type { AccessTokenClaims } from '../tokens/tokens.js';

/** Why a session ended: the `reason` of the `session_ended` audit event. */
export type SessionEndReason =
  | 'sign_out'
  | 'ended_by_user'
  | 'ended_by_operator'
  | 'backchannel_logout'
  | 'tenant_switched'
  | 'idle_timeout'
  | 'absolute_timeout';

/** Who a request acts for, as proven by a session cookie. */
export interface SessionPrincipal {
  kind: 'session';
  userId: string;
  email: string;
  /** Never set: a session is a user's (read alike of every `Principal`, where a client's has it). */
  clientId?: undefined;
  tenantId: string;
  tenantType: TenantType;
  /** The role's scopes as `authorization.roles` says now: sorted, each once, frozen. */
  scopes: readonly string[];
  /** `ses_…` */
  sessionId: string;
  /** The claims the session guard judges (`jti` = the session id, `exp` = its absolute end). */
  claims: AccessTokenClaims;
}

/** What begins a session: a user proven (password or a tenant's IdP) and the tenant chosen. */
export interface SessionStart {
  userId: string;
  tenantId: string;
  userAgent: string | undefined;
  ip: string;
  idp?: BrowserSessionRecord['idp'];
  /**
   * Unix seconds: a session that continues another (a tenant switch) ends no
   * later than that one would have: the absolute timeout counts from the
   * sign-in, never from a switch.
   */
  endsBy?: number;
  /** The sign-in request's `X-Request-Id`, for the `session_started` audit event. */
  requestId?: string;
}

export interface StartedSession {
  /** The cookie's value: shown once, never stored, logged or audited. */
  cookieValue: string;
  session: BrowserSessionRecord;
}

export interface BrowserSessions {
  /**
   * Begins a session for a member of the tenant, audited `session_started`.
   * @throws GatewayError `tenant_access_denied` when the tenant does not exist
   *   or the user is not a member (as a token request is refused)
   */
  start(input: SessionStart): Promise<StartedSession>;
  /**
   * The principal of a cookie's value: synchronous when its session is
   * cached and judged alive from the cache (the steady state), else a promise.
   * @throws GatewayError `invalid_token` for a malformed value, an unknown
   *   session, a wrong secret, an idle or absolute timeout passed, or an
   *   ended session (rejects with it when asynchronous)
   */
  principal(cookieValue: string): SessionPrincipal | Promise<SessionPrincipal>;
  /**
   * Ends one session on every instance before it resolves (deny-listed, then
   * the record removed), audited `session_ended` with the reason.
   * @param actor who ended it, for the audit event; omitted: the session's
   *   own user through the API (the CLI passes the operator)
   * @returns false when there was no such session (of `userId`, when given).
   */
  end(
    sessionId: string,
    reason: SessionEndReason,
    userId?: string,
    actor?: AuditActor,
  ): Promise<boolean>;
  /** The user's sessions, newest first. */
  list(userId: string): Promise<BrowserSessionRecord[]>;
  /**
   * Ends the user's sessions begun at an IdP (`issuer`; only those of `sid`
   * when given): OIDC Back-Channel Logout.
   * @returns how many were ended
   */
  endFromIdp(userId: string, issuer: string, sid?: string): Promise<number>;
}
