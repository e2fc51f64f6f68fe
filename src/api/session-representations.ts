/**
 * The JSON shapes of a user's sessions (`GET /1/sessions`), built from the
 * identity layer's `UserSession` in one place, typed by their schemas
 * (`schemas/sessions.ts`); the CLI's `session list` and `user show` print the
 * same. Never a secret: a session is named by its public id.
 */
import type { z } from 'zod';
import type { UserSession } from '../identity/sessions.js';
import type { Session, SessionList } from './schemas/sessions.js';

export function sessionView(session: UserSession): z.infer<typeof Session> {
  return {
    session_id: session.sessionId,
    kind: session.kind,
    tenant_id: session.tenantId,
    created_at: session.createdAt,
    last_seen_at: session.lastSeenAt,
    user_agent: session.userAgent,
    ip: session.ip,
    current: session.current,
  };
}

export function sessionList(sessions: UserSession[]): z.infer<typeof SessionList> {
  return { sessions: sessions.map(sessionView) };
}
