/**
 * Audit events: what happened to an identity, by whom, from where
 * (docs/audit.md). One flat JSON object each, the same in the store's stream
 * and in the log. Never a secret: the builder takes ids, e-mails and
 * addresses only, so no password, hash, token or header can reach one (a
 * token's `jti` is its id, not the token).
 */
import { tenantStream, USER_STREAM } from '../store/audit-log.js';

export type AuditEventKind =
  | 'login_succeeded'
  | 'login_failed'
  | 'login_locked_out'
  | 'token_issued'
  | 'client_token_issued'
  | 'client_auth_failed'
  | 'logout'
  | 'token_revoked'
  | 'token_refreshed'
  | 'refresh_token_reused'
  | 'federated_sign_in'
  | 'federated_user_created'
  | 'federated_member_joined'
  | 'federated_sign_in_refused'
  | 'backchannel_logout'
  | 'backchannel_logout_refused'
  | 'password_changed'
  | 'user_created'
  | 'user_disabled'
  | 'user_enabled'
  | 'user_removed'
  | 'tenant_created'
  | 'tenant_updated'
  | 'tenant_removed'
  | 'member_added'
  | 'member_removed'
  | 'member_role_changed'
  | 'invitation_created'
  | 'invitation_revoked'
  | 'invitation_accepted'
  | 'client_created'
  | 'client_secret_rotated'
  | 'client_removed'
  | 'api_key_created'
  | 'api_key_removed'
  | 'idp_set'
  | 'idp_removed'
  | 'domain_added'
  | 'domain_verified'
  | 'domain_removed'
  | 'revoked_credential_used'
  | 'session_started'
  | 'session_ended';

/** Who made a change, and through what. */
export interface AuditActor {
  source: 'api' | 'cli' | 'seed';
  /**
   * api: the e-mail the request logged in with (for a refused login, the one
   * it tried); cli: `cli:<OS user>`; seed: `seed`.
   */
  actor: string;
  /** api only. */
  client_ip?: string;
  /** api only: the `X-Request-Id` the client was answered with. */
  request_id?: string;
}

/** What an event is about. */
export interface AuditSubject {
  tenant_id?: string;
  user_id?: string;
  user_email?: string;
  /** The id of the token issued or revoked. */
  jti?: string;
  /** The refresh family a token was issued in or that ended (its id, never a refresh token). */
  family_id?: string;
  /** user_removed: the tenants whose membership ended with the user. */
  tenant_ids?: string[];
  /** tenant_removed: the users whose membership ended with the tenant. */
  user_ids?: string[];
  /** invitation_created, invitation_revoked, invitation_accepted: the invitation's id (never its token). */
  invitation_id?: string;
  /** member_role_changed: the member's role from then on; invitation_*: the role invited to. */
  role?: 'admin' | 'member';
  /**
   * federated_sign_in_refused: why (`auth/federation/refusals.ts`);
   * session_ended: why the session ended (`SessionEndReason`);
   * backchannel_logout_refused: why (`auth/federation/logout-token.ts`).
   */
  reason?: string;
  /** session_started, session_ended: the browser session's id (public; never its cookie). */
  session_id?: string;
  /** Events of a machine client: its id (public; never its secret). */
  client_id?: string;
  /** client_created: the client's scopes. */
  scopes?: string[];
  /** api_key_created, api_key_removed, revoked_credential_used: the key's id (never the key). */
  key_id?: string;
  /** client_removed: the ids of the keys removed with it. */
  key_ids?: string[];
  /** idp_set, idp_removed, federated_*: the tenant's identity provider (its issuer; never its secret). */
  issuer?: string;
  /** federated_*: how the sign-in came, when through the browser sign-in (`browser`). */
  via?: 'browser';
  /**
   * federated_member_joined: a local user the provider did not create, linked
   * because the IdP record links existing users (`link_existing`).
   */
  linked?: true;
  /** idp_set: the gateway's client id at the identity provider (public, like the issuer). */
  idp_client_id?: string;
  /** domain_added, domain_verified, domain_removed: the tenant's e-mail domain. */
  domain?: string;
  /** backchannel_logout: how many browser sessions ended. */
  sessions_ended?: number;
}

export type AuditEvent = {
  /** ISO 8601, UTC, six decimals (see {@link eventTime}). */
  time: string;
  event: AuditEventKind;
} & AuditActor &
  AuditSubject;

export function auditEvent(
  event: AuditEventKind,
  actor: AuditActor,
  subject: AuditSubject,
  nowMs: number = Date.now(),
): AuditEvent {
  return dropUndefined({ time: eventTime(nowMs), event, ...actor, ...subject });
}

/** The last event time this process gave, in µs since the epoch. */
let lastMicros = 0;

/**
 * The wall clock's millisecond, and three more digits that keep one
 * process's events in order within it: the second event of a millisecond
 * is 1 µs after the first, and so on. One command's events (a user removed,
 * then a membership ended with it) go to different streams in the same
 * millisecond; a reader merging streams by time sees them in the order they
 * happened. A clock stepped back by more than a millisecond is followed.
 */
export function eventTime(nowMs: number): string {
  let micros = nowMs * 1000;
  if (micros <= lastMicros && lastMicros - micros < 1000) micros = lastMicros + 1;
  lastMicros = micros;
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/** µs since the epoch of an event's `time` (three or six decimals); NaN when it is not one. */
export function eventMicros(time: string): number {
  const ms = Date.parse(time);
  const extra = /\.\d{3}(\d{3})Z$/.exec(time)?.[1];
  return ms * 1000 + (extra === undefined ? 0 : Number(extra));
}

/**
 * The stream an event goes to: its tenant's when it names one, else the
 * stream of user-level events (logins, password changes, user changes),
 * which concern every tenant of the user at once.
 */
export function streamOf(event: AuditEvent): string {
  return event.tenant_id === undefined ? USER_STREAM : tenantStream(event.tenant_id);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
