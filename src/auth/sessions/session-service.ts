/**
 * The browser sessions service (`BrowserSessions`, `browser-sessions.ts`):
 * begins a session for a member (the same checks as a token grant,
 * `../member-access.ts`), recognises its cookie (`session-recognition.ts`),
 * ends it on every instance, lists a user's sessions. Ending a session
 * deny-lists its id until its absolute end (`revocations.revokeToken`, a
 * revoking write: confirmed on every instance in lease mode before it
 * resolves), then removes its record.
 */
import type { AuditActor } from '../../audit/events.js';
import type { AuditRecorder } from '../../audit/recorder.js';
import type { SessionsConfig } from '../../config/schema/sessions.js';
import { GatewayError } from '../../errors.js';
import type { BrowserSessionRecord } from '../../store/browser-sessions.js';
import type { Store } from '../../store/types.js';
import type { RoleScopes } from '../accounts.js';
import { memberAccess } from '../member-access.js';
import { isDisabledHash } from '../revocation/disabled.js';
import type { SessionGuard } from '../revocation/sessions.js';
import type { TokenSettings } from '../tokens/tokens.js';
import type {
  BrowserSessions,
  SessionEndReason,
  SessionStart,
  StartedSession,
} from './browser-sessions.js';
import { newSessionCookie } from './session-cookie-value.js';
import { createSessionRecognition } from './session-recognition.js';

/** A user agent is kept to this many characters. */
const USER_AGENT_MAX = 256;

/** What the service is built from (`core/create-core.ts` gives the core's parts and `config.sessions`). */
export interface BrowserSessionDeps {
  store: Store;
  guard: SessionGuard;
  roleScopes: RoleScopes;
  config: Pick<SessionsConfig, 'idleTimeoutSeconds' | 'absoluteTimeoutSeconds'>;
  tokens: Pick<TokenSettings, 'issuer' | 'audience' | 'clockSkewSeconds'>;
  audit: AuditRecorder;
  log: { warn(obj: object, msg: string): void };
  /** Unix milliseconds; the system clock when omitted (tests move it). */
  clock?: () => number;
  /** A session's last use the store did not take (metrics). */
  onTouchFailure?: () => void;
  cacheEntries?: number;
}

/**
 * The service of `BrowserSessions`: one per process, sharing the core's
 * session guard, so a session and a token are judged by one cache.
 */
export function createBrowserSessions(deps: BrowserSessionDeps): BrowserSessions {
  const clock = deps.clock ?? Date.now;
  const seconds = () => Math.floor(clock() / 1000);
  const recognition = createSessionRecognition({
    store: deps.store,
    guard: deps.guard,
    roleScopes: deps.roleScopes,
    idleTimeoutSeconds: deps.config.idleTimeoutSeconds,
    tokens: deps.tokens,
    clock,
    endIdle: (sessionId) => end(sessionId, 'idle_timeout'),
    onTouchFailure(sessionId, err) {
      deps.onTouchFailure?.();
      deps.log.warn(
        { sessionId, err: (err as Error).message },
        'browser session: its last use not written to the store (tried again in a minute)',
      );
    },
    ...(deps.cacheEntries === undefined ? {} : { cacheEntries: deps.cacheEntries }),
  });

  async function end(
    sessionId: string,
    reason: SessionEndReason,
    userId?: string,
    actor?: AuditActor,
  ): Promise<boolean> {
    const session = await deps.store.browserSessions.getBrowserSession(sessionId);
    if (session === null || (userId !== undefined && session.userId !== userId)) return false;
    // Every instance refuses the id before the record goes (and before this resolves, in lease mode).
    await deps.store.revocations.revokeToken(
      sessionId,
      session.absoluteExpiresAt + deps.tokens.clockSkewSeconds,
    );
    recognition.forget(sessionId);
    await deps.store.browserSessions.removeBrowserSession(sessionId);
    await deps.audit.record('session_ended', actor ?? apiActor(session), {
      ...subjectOf(session),
      reason,
    });
    return true;
  }

  return {
    start: (input) => start(deps, seconds(), input),
    principal: (cookieValue) => recognition.principal(cookieValue),
    end,
    list: (userId) => deps.store.browserSessions.listBrowserSessions(userId),
    async endFromIdp(userId, issuer, sid) {
      const sessions = await deps.store.browserSessions.listBrowserSessions(userId);
      const fromIdp = sessions.filter(
        ({ idp }) => idp?.issuer === issuer && (sid === undefined || idp.sid === sid),
      );
      const ended = await Promise.all(
        fromIdp.map(({ sessionId }) => end(sessionId, 'backchannel_logout', userId)),
      );
      return ended.filter(Boolean).length;
    },
  };
}

async function start(
  deps: BrowserSessionDeps,
  now: number,
  input: SessionStart,
): Promise<StartedSession> {
  const { store } = deps;
  const user = await store.users.getUser(input.userId);
  // A user gone or disabled since the password was checked: as a wrong password.
  if (user === null || isDisabledHash(user.passwordHash)) {
    throw new GatewayError('invalid_credentials', 'The e-mail or password is wrong.');
  }
  const { tenant, membership, role } = await memberAccess(store, input.tenantId, user.id);
  const { cookieValue, sessionId, digest } = newSessionCookie();
  const session: BrowserSessionRecord = {
    sessionId,
    digest,
    userId: user.id,
    email: user.email,
    tenantId: tenant.tenantId,
    role,
    sessionVersion: user.sessionVersion,
    membershipGeneration: membership.generation,
    createdAt: now,
    lastSeenAt: now,
    absoluteExpiresAt: Math.min(
      now + deps.config.absoluteTimeoutSeconds,
      input.endsBy ?? Number.POSITIVE_INFINITY,
    ),
    userAgent: [...(input.userAgent ?? '')].slice(0, USER_AGENT_MAX).join(''),
    ip: input.ip,
    ...(input.idp === undefined ? {} : { idp: { ...input.idp } }),
  };
  await store.browserSessions.createBrowserSession(session);
  await deps.audit.record(
    'session_started',
    {
      ...apiActor(session),
      client_ip: input.ip,
      ...(input.requestId === undefined ? {} : { request_id: input.requestId }),
    },
    { ...subjectOf(session), ...(input.idp === undefined ? {} : { issuer: input.idp.issuer }) },
  );
  return { cookieValue, session };
}

/** The session's user, acting through the API (a sign-in, a sign-out). */
const apiActor = (session: BrowserSessionRecord): AuditActor => ({
  source: 'api',
  actor: session.email,
});

/** What a session event is about: ids and the e-mail, never the cookie or its digest. */
const subjectOf = (session: BrowserSessionRecord) => ({
  tenant_id: session.tenantId,
  user_id: session.userId,
  user_email: session.email,
  session_id: session.sessionId,
});
