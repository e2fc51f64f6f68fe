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
  | 'logout'
  | 'password_changed'
  | 'user_created'
  | 'user_disabled'
  | 'user_enabled'
  | 'user_removed'
  | 'tenant_created'
  | 'tenant_updated'
  | 'tenant_removed'
  | 'member_added'
  | 'member_removed';

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
  /** user_removed: the tenants whose membership ended with the user. */
  tenant_ids?: string[];
  /** tenant_removed: the users whose membership ended with the tenant. */
  user_ids?: string[];
}

export type AuditEvent = {
  /** ISO 8601, UTC, milliseconds. */
  time: string;
  event: AuditEventKind;
} & AuditActor &
  AuditSubject;

export function auditEvent(
  event: AuditEventKind,
  actor: AuditActor,
  subject: AuditSubject,
  now: Date = new Date(),
): AuditEvent {
  return dropUndefined({ time: now.toISOString(), event, ...actor, ...subject });
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
