/**
 * A signed-in user moving to another of their tenants in the browser (the
 * console's tenant switch): a new session for that tenant — begun only if
 * the user is a member there, exactly as a sign-in is — and the old one
 * ended everywhere (`session_ended` reason `tenant_switched`). A session
 * begun at a tenant's IdP keeps that IdP's binding, so the IdP's
 * back-channel logout still ends it; and the new session ends when the old
 * one would have (`sessions.absoluteTimeoutSeconds` counts from the sign-in:
 * switching back and forth never keeps a session, or a stolen cookie, alive).
 */
import type {
  BrowserSessions,
  SessionStart,
  StartedSession,
} from '../auth/sessions/browser-sessions.js';
import { GatewayError } from '../errors.js';
import type { Store } from '../store/types.js';

export interface TenantSwitchDeps {
  store: Pick<Store, 'browserSessions'>;
  browserSessions: Pick<BrowserSessions, 'start' | 'end'>;
}

export interface TenantSwitch {
  userId: string;
  /** The session the request came with. */
  sessionId: string;
  tenantId: string;
  userAgent: string | undefined;
  ip: string;
  requestId?: string;
}

/**
 * @throws GatewayError `tenant_access_denied` when the tenant does not exist
 *   or the user is not its member (the old session then stays);
 *   `invalid_token` when the old session has ended meanwhile
 */
export async function switchTenant(
  deps: TenantSwitchDeps,
  move: TenantSwitch,
): Promise<StartedSession> {
  const old = await deps.store.browserSessions.getBrowserSession(move.sessionId);
  // Ended since the request was admitted: nothing left to move.
  if (old === null) throw new GatewayError('invalid_token', 'The session has ended.');
  const start: SessionStart = {
    userId: move.userId,
    tenantId: move.tenantId,
    userAgent: move.userAgent,
    ip: move.ip,
    endsBy: old.absoluteExpiresAt,
    ...(old.idp === undefined ? {} : { idp: old.idp }),
    ...(move.requestId === undefined ? {} : { requestId: move.requestId }),
  };
  const started = await deps.browserSessions.start(start);
  await deps.browserSessions.end(move.sessionId, 'tenant_switched', move.userId);
  return started;
}
