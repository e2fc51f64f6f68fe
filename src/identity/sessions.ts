/**
 * A user's sessions, once for every front end (issue 44): `GET` and `DELETE
 * /1/sessions…` (the user, by Bearer or session cookie) and the CLI's
 * `session list`, `session end` and `user show` (the operator). A session is
 * either kind a user holds: a browser session (`ses_…`, the cookie's record,
 * `auth/sessions/`) or a refresh family (a login with refresh tokens, named
 * by its family id, the `fid` of its access tokens).
 *
 * Ending one ends it on every instance before the promise resolves: a
 * browser session through `BrowserSessions.end`, a family through the
 * refresh tokens' own `endFamily` (revoked, then its access tokens
 * deny-listed through the revocation path, confirmed by every instance in
 * lease mode) — the very code `DELETE /1/token` and reuse detection use.
 *
 * Only the operator may end another user's session. Anyone else naming one
 * is answered `not_found`, exactly as for an id that does not exist: the
 * answer never tells whether an id is someone's (no probing of ids).
 */
import type { AuditRecorder } from '../audit/recorder.js';
import type { RefreshTokens } from '../auth/refresh/refresh-grant.js';
import type { BrowserSessions } from '../auth/sessions/browser-sessions.js';
import { isDisabledHash } from '../auth/revocation/disabled.js';
import { GatewayError } from '../errors.js';
import { isLiveFamily, type RefreshFamily, type Store } from '../store/types.js';
import type { Actor } from './actor.js';

export interface SessionDeps {
  store: Pick<Store, 'refresh' | 'users' | 'memberships'>;
  /** Ends a family with its access tokens (`RefreshTokens.endFamily`). */
  refreshTokens: Pick<RefreshTokens, 'endFamily'>;
  /** Browser sessions; undefined where they are off (`sessions.enabled: false`): none to list or end. */
  browserSessions?: Pick<BrowserSessions, 'list' | 'end'> | undefined;
  audit: AuditRecorder;
  /** Unix seconds (tests move it). */
  now?: () => number;
}

/** One session of a user, either kind: what the list shows (never a secret). */
export interface UserSession {
  /** `ses_…` for a browser session, the family id for a refresh family. */
  sessionId: string;
  kind: 'browser' | 'refresh';
  tenantId: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds: a browser session's last use seen; a family's last rotation, or its creation. */
  lastSeenAt: number;
  /** As the client sent it at sign-in (at most 256 characters); null when unknown. */
  userAgent: string | null;
  ip: string | null;
  /** Whether this is the session the caller is using now. */
  current: boolean;
}

/** A browser session's id: `ses_` and the rest, no longer than an id ever is. */
const BROWSER_SESSION_ID = /^ses_[A-Za-z0-9_-]{1,64}$/;
/** A refresh family's id: 26 base32 characters (`auth/refresh/refresh-tokens.ts`). */
const FAMILY_ID = /^[a-z2-7]{26}$/;

const NO_SUCH_SESSION = (): GatewayError => new GatewayError('not_found', 'No such session.');

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The user's live sessions of both kinds, newest first. A session whose
 * login a later event ended — a password change, the user disabled, the
 * membership removed or its role changed — is left out though its record
 * stays until its next use: it is judged as the session guard judges it
 * ({@link aliveUnder}). A read: it changes nothing and records no event, so
 * it takes no actor.
 * @param current the caller's own session: a browser session's id or the
 *   bearer token's `fid`; undefined when the caller uses neither (the CLI)
 */
export async function listSessions(
  deps: SessionDeps,
  userId: string,
  current?: string,
): Promise<UserSession[]> {
  const [user, browserRecords, familyRecords] = await Promise.all([
    deps.store.users.getUser(userId),
    deps.browserSessions?.list(userId) ?? [],
    deps.store.refresh.listRefreshFamilies(userId),
  ]);
  if (user === null || isDisabledHash(user.passwordHash)) return [];
  const tenants = new Set([...browserRecords, ...familyRecords].map((s) => s.tenantId));
  const generations = new Map(
    await Promise.all(
      [...tenants].map(
        async (tenantId) =>
          [
            tenantId,
            (await deps.store.memberships.readMembership(tenantId, userId)).membership?.generation,
          ] as const,
      ),
    ),
  );
  const alive = aliveUnder(user.sessionVersion, generations);
  const browser = browserRecords.filter(alive);
  const families = familyRecords.filter(alive);
  const sessions: UserSession[] = [
    ...browser.map((s) => ({
      sessionId: s.sessionId,
      kind: 'browser' as const,
      tenantId: s.tenantId,
      createdAt: s.createdAt,
      lastSeenAt: s.lastSeenAt,
      userAgent: s.userAgent,
      ip: s.ip,
      current: s.sessionId === current,
    })),
    ...families.map((f) => familySession(f, current)),
  ];
  return sessions.sort((a, b) => b.createdAt - a.createdAt || (a.sessionId < b.sessionId ? -1 : 1));
}

/**
 * Whether a session begun under a session version and a membership
 * generation is alive now: the user's version and the membership's
 * generation are still those (`auth/revocation/sessions.ts` judges tokens so).
 */
function aliveUnder(
  sessionVersion: number,
  generations: Map<string, number | undefined>,
): (s: { tenantId: string; sessionVersion: number; membershipGeneration: number }) => boolean {
  return (s) =>
    s.sessionVersion === sessionVersion &&
    generations.get(s.tenantId) !== undefined &&
    generations.get(s.tenantId) === s.membershipGeneration;
}

function familySession(family: RefreshFamily, current: string | undefined): UserSession {
  return {
    sessionId: family.familyId,
    kind: 'refresh',
    tenantId: family.tenantId,
    createdAt: family.createdAt,
    lastSeenAt: family.previous?.usedAt ?? family.createdAt,
    userAgent: family.userAgent ?? null,
    ip: family.ip ?? null,
    current: family.familyId === current,
  };
}

/**
 * Ends one session, either kind, on every instance before it resolves. A
 * browser session's end is audited `session_ended` by the service (reason
 * `ended_by_user` or `ended_by_operator`); a family's `token_revoked` with
 * its `family_id` and the same reason.
 * @param ownerId the user whose session it must be: the caller's own id for
 *   anyone but the operator, who may leave it out to end anyone's
 * @throws GatewayError `not_found` for an unknown, ended or malformed id, or
 *   another user's; `forbidden` when someone other than the operator names no owner
 */
export async function endSession(
  deps: SessionDeps,
  actor: Actor,
  sessionId: string,
  ownerId?: string,
): Promise<void> {
  if (actor.kind !== 'operator' && ownerId === undefined)
    throw new GatewayError('forbidden', "Only the operator may end another user's session.");
  const reason = actor.kind === 'operator' ? 'ended_by_operator' : 'ended_by_user';
  if (BROWSER_SESSION_ID.test(sessionId)) {
    const ended = await deps.browserSessions?.end(sessionId, reason, ownerId, actor.audit);
    if (ended !== true) throw NO_SUCH_SESSION();
    return;
  }
  if (!FAMILY_ID.test(sessionId)) throw NO_SUCH_SESSION();
  const family = await deps.store.refresh.getRefreshFamily(sessionId);
  const now = (deps.now ?? nowSeconds)();
  if (family === null || !isLiveFamily(family, now)) throw NO_SUCH_SESSION();
  if (ownerId !== undefined && family.userId !== ownerId) throw NO_SUCH_SESSION();
  if ((await deps.refreshTokens.endFamily(family.familyId)) === null) throw NO_SUCH_SESSION();
  const user = await deps.store.users.getUser(family.userId);
  await deps.audit.record('token_revoked', actor.audit, {
    tenant_id: family.tenantId,
    user_id: family.userId,
    ...(user === null ? {} : { user_email: user.email }),
    family_id: family.familyId,
    reason,
  });
}
