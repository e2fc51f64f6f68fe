/**
 * Recognising a session cookie on a request: `BrowserSessions.principal`.
 *
 * The steady state is one Map lookup: the exact cookie value verified before
 * → its principal (as the bearer path keeps verified tokens,
 * `../tokens/verified-tokens.ts`), then the clock against the session's
 * timeouts and the session guard's synchronous verdict from its cache
 * (`aliveFromCache`, which the store's session events keep exact: sign-out,
 * password change, disable, removal, member removal, role change, tenant
 * removal reach it on every instance before their answer). No store call.
 *
 * Otherwise the value is parsed strictly, its record read (this process's LRU
 * of records by session id, else the store: a session begun on another
 * instance), the secret checked against the stored digest in constant time,
 * the timeouts checked, and the guard asked (`assertAlive` when its cache
 * cannot tell).
 *
 * Idle timeout: the last use is tracked in process and written to the store
 * in the background at most once a minute per session; when the local view
 * says the session is idle, the record is read again before refusing, since
 * another instance may have seen a use since (so an instance may take a
 * session for idle up to that minute early, never late).
 */
import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../bounded-cache.js';
import type { BrowserSessionRecord } from '../../store/browser-sessions.js';
import type { Store, TenantType } from '../../store/types.js';
import type { RoleScopes } from '../accounts.js';
import type { SessionGuard } from '../revocation/sessions.js';
import { tokenRefused } from '../tokens/token-refusals.js';
import type { AccessTokenClaims, TokenSettings } from '../tokens/tokens.js';
import type { SessionPrincipal } from './browser-sessions.js';
import { roleScopesOf, sessionClaims, sessionPrincipal } from './session-claims.js';
import { parseSessionCookie, secretMatches } from './session-cookie-value.js';
import { sessionRefused } from './session-refusals.js';

/** A session's last use is written to the store at most this often (seconds). */
export const TOUCH_INTERVAL_SECONDS = 60;

/** A session this process has read, and what it saw of its use. */
interface KnownSession {
  record: BrowserSessionRecord;
  tenantType: TenantType;
  /** Unix seconds of the last use seen here or read from the store. */
  seenAt: number;
  /** Unix seconds of the last use written to the store (by this process, or as read). */
  writtenAt: number;
  /** The exact cookie value verified for it, once one has been. */
  cookie?: string;
}

/** A verified cookie value's verdict, good while the roles' scopes are the ones it was made with. */
interface Verified {
  known: KnownSession;
  roles: RoleScopes['current'];
  claims: AccessTokenClaims;
  principal: SessionPrincipal;
}

/** What recognising a cookie needs: the store, the guard that judges, the live roles, the clock. */
export interface SessionRecognitionDeps {
  store: Pick<Store, 'browserSessions' | 'tenants'>;
  guard: Pick<SessionGuard, 'aliveFromCache' | 'assertAlive'>;
  roleScopes: RoleScopes;
  idleTimeoutSeconds: number;
  tokens: Pick<TokenSettings, 'issuer' | 'audience'>;
  /** Unix milliseconds. */
  clock: () => number;
  /** Ends a session found idle (deny-list, record removed, audited); its failure changes no verdict. */
  endIdle(sessionId: string): Promise<unknown>;
  /** A last use the store did not take (it is written again a minute later). */
  onTouchFailure(sessionId: string, err: unknown): void;
  cacheEntries?: number;
}

/** The recognition half of `BrowserSessions`, apart so the service stays about beginning and ending. */
export interface SessionRecognition {
  principal(cookieValue: string): SessionPrincipal | Promise<SessionPrincipal>;
  /** Forgets what this process knows of a session (it ended here). */
  forget(sessionId: string): void;
}

/** What the recognition's steps share: its deps and its two caches. */
interface Caches {
  deps: SessionRecognitionDeps;
  /** Records read, by session id. */
  known: LRUCache<string, KnownSession>;
  /** Exact cookie values verified, with their verdicts. */
  verified: LRUCache<string, Verified>;
}

/** Recognition over two bounded caches (records by id, verified values), empty at first. */
export function createSessionRecognition(deps: SessionRecognitionDeps): SessionRecognition {
  const max = deps.cacheEntries ?? 100_000;
  const caches: Caches = {
    deps,
    known: boundedCache<string, KnownSession>(max),
    verified: boundedCache<string, Verified>(max),
  };
  return {
    principal(cookieValue) {
      const hit = caches.verified.get(cookieValue);
      return (
        (hit === undefined ? undefined : fromCache(caches, hit)) ?? slowly(caches, cookieValue)
      );
    },
    forget(sessionId) {
      const session = caches.known.get(sessionId);
      if (session !== undefined) forget(caches, session);
    },
  };
}

function forget({ known, verified }: Caches, session: KnownSession): void {
  if (known.get(session.record.sessionId) === session) known.delete(session.record.sessionId);
  if (session.cookie !== undefined) verified.delete(session.cookie);
}

/** A use at `now`: kept here, and written to the store when the last write is a minute old. */
function seen({ deps }: Caches, session: KnownSession, now: number): void {
  if (now > session.seenAt) session.seenAt = now;
  if (now - session.writtenAt < TOUCH_INTERVAL_SECONDS) return;
  session.writtenAt = now;
  const { sessionId } = session.record;
  deps.store.browserSessions
    .touchBrowserSession(sessionId, Math.floor(now))
    .catch((err: unknown) => deps.onTouchFailure(sessionId, err));
}

/** The steady state: the verdict of a verified value, or undefined when it must be made again. */
function fromCache(caches: Caches, hit: Verified): SessionPrincipal | undefined {
  const { deps } = caches;
  const now = deps.clock() / 1000;
  const { known: session } = hit;
  if (now >= session.record.absoluteExpiresAt || now - session.seenAt >= deps.idleTimeoutSeconds)
    return undefined;
  if (hit.roles !== deps.roleScopes.current) return undefined;
  try {
    if (!deps.guard.aliveFromCache(hit.claims)) return undefined;
  } catch (err) {
    forget(caches, session);
    throw err;
  }
  seen(caches, session, now);
  return hit.principal;
}

/** The session as the store has it, with its tenant's type (fixed for a tenant's life). */
async function load({ deps, known }: Caches, sessionId: string): Promise<KnownSession | undefined> {
  const record = await deps.store.browserSessions.getBrowserSession(sessionId);
  if (record === null) return undefined;
  const tenant = await deps.store.tenants.getTenant(record.tenantId);
  if (tenant === null) {
    throw tokenRefused('membership_ended', "The session's tenant no longer exists.");
  }
  const session: KnownSession = {
    record,
    tenantType: tenant.type,
    seenAt: record.lastSeenAt,
    writtenAt: record.lastSeenAt,
  };
  known.set(sessionId, session);
  return session;
}

/** A session the local view takes for idle, judged again on the store's record. */
async function stillIdle({ deps }: Caches, session: KnownSession, now: number): Promise<boolean> {
  const record = await deps.store.browserSessions.getBrowserSession(session.record.sessionId);
  if (record !== null) {
    session.seenAt = Math.max(session.seenAt, record.lastSeenAt);
    session.writtenAt = Math.max(session.writtenAt, record.lastSeenAt);
  }
  return record === null || now - session.seenAt >= deps.idleTimeoutSeconds;
}

/** The checks of the record itself: secret, absolute end, idle time; answers the time of the use. */
async function checkRecord(caches: Caches, session: KnownSession, secret: string): Promise<number> {
  const { deps } = caches;
  if (!secretMatches(secret, session.record.digest)) throw sessionRefused('session_secret');
  const now = deps.clock() / 1000;
  if (now >= session.record.absoluteExpiresAt) {
    forget(caches, session);
    throw sessionRefused('session_expired');
  }
  if (now - session.seenAt >= deps.idleTimeoutSeconds && (await stillIdle(caches, session, now))) {
    forget(caches, session);
    await deps.endIdle(session.record.sessionId).catch(() => undefined);
    throw sessionRefused('session_idle');
  }
  return now;
}

/** A value not verified before (or whose verdict must be made again): parsed, read, checked, judged. */
async function slowly(caches: Caches, cookieValue: string): Promise<SessionPrincipal> {
  const { deps, known } = caches;
  const parts = parseSessionCookie(cookieValue);
  if (parts === undefined) throw sessionRefused('malformed');
  const session = known.get(parts.sessionId) ?? (await load(caches, parts.sessionId));
  if (session === undefined) throw sessionRefused('session_unknown');
  const now = await checkRecord(caches, session, parts.secret);
  const roles = deps.roleScopes.current;
  const scopes = roleScopesOf(roles, session.record.role);
  const claims = sessionClaims(session.record, session.tenantType, scopes, deps.tokens);
  try {
    if (!deps.guard.aliveFromCache(claims)) await deps.guard.assertAlive(claims);
  } catch (err) {
    forget(caches, session);
    throw err;
  }
  const principal = sessionPrincipal(claims, scopes);
  // Not kept when the session was forgotten meanwhile (it ended here).
  if (known.get(parts.sessionId) === session) {
    if (session.cookie !== undefined && session.cookie !== cookieValue)
      caches.verified.delete(session.cookie);
    session.cookie = cookieValue;
    caches.verified.set(cookieValue, { known: session, roles, claims, principal });
  }
  seen(caches, session, now);
  return principal;
}
