/**
 * Session state: whether a verified token is still alive. A token dies when
 * its `jti` is deny-listed (logout), when the user's session version has
 * moved past the one it carries (password change), or when the membership it
 * was issued under has ended (membership removed). All three live in the
 * store, so the verdict is the same on every instance.
 *
 * The state is cached in process so that a steady stream of requests makes no
 * store call, and kept exact by the store's session events (Redis pub/sub):
 * a password change, logout or membership change on any instance reaches
 * every cache within one pub/sub hop. Whenever event delivery is not live
 * the cache is dropped and not used — every request reads the store, and with
 * the store unreachable that is a 503, never a guess.
 *
 * A dead token never comes back to life. The session version only grows and
 * a deny-list entry outlives the token; a membership's tokens carry its
 * generation (`mg`), and every change of a user×tenant pair takes a new,
 * greater one from the store's one counter, so a membership added back — or
 * a tenant created again under the same id — has a generation no earlier
 * token carries. The cache keeps, per pair, the membership and the
 * generation its knowledge is as of, and takes an event or a store read only
 * when it is newer than what it holds: events arriving out of order (an
 * instance's own change told before pub/sub, a lease confirmation after a
 * later change) cannot bring an ended membership back. A token whose
 * generation is newer than the cache's knowledge (issued after a change not
 * heard of here yet) is asked of the store: never refused, nor accepted, on
 * a guess.
 *
 * Lease mode (`leaseMs`, on a shared store): the cache is trusted only while
 * this instance's revocation lease is fresh too, and each confirmation
 * request is acknowledged once its events are applied — so a revoker that
 * has every holder's acknowledgement, or has waited out the lease of those
 * that gave none, knows no instance answers from an old verdict
 * (`confirmed-revocations.ts`).
 */
import { LRUCache } from 'lru-cache';
import type { MembershipState, SessionEvent, SessionEventListener, Store } from '../store/types.js';
import { tokenRefused } from './token-refusals.js';
import { holdRevocationLease, type RevocationLease } from './revocation-lease.js';
import type { AccessTokenClaims } from './tokens.js';

export interface SessionGuard {
  /** @throws GatewayError `invalid_token` when the token was revoked; `unavailable` when the store is down. */
  assertAlive(claims: AccessTokenClaims): Promise<void>;
  /**
   * The verdict from the cache alone, without any await: true when alive,
   * false when the cache cannot tell (then use `assertAlive`).
   * @throws GatewayError `invalid_token` when the cache knows the token is dead.
   */
  aliveFromCache(claims: AccessTokenClaims): boolean;
  /** Ends one token, on every instance. */
  revoke(claims: AccessTokenClaims): Promise<void>;
  /**
   * Tells `listener` of every session event once this guard has applied it
   * (so a verdict asked for from the listener already reflects it), and of
   * every change of liveness. For what holds a verdict longer than a request:
   * open WebSockets.
   */
  watch(listener: SessionEventListener): () => void;
  /** Cache figures, for metrics. */
  stats(): SessionCacheStats;
  /** Stops watching, and gives up the lease (lease mode). */
  close(): Promise<void>;
}

export interface SessionCacheStats {
  /** Whether the cache is trusted: events are delivered (and, in lease mode, the lease is fresh). */
  live: boolean;
  hits: number;
  misses: number;
}

/** A user the store does not know: every token of theirs is dead. */
const UNKNOWN_USER = -1;

/** What the store says of a token: each part cached on its own. */
interface SessionState {
  revoked: boolean;
  version: number;
  /** The token's user×tenant pair. */
  membership: MembershipState;
}

function judge(claims: AccessTokenClaims, state: SessionState): void {
  if (state.revoked) throw tokenRefused('revoked', 'The token has been revoked.');
  if (state.version === UNKNOWN_USER)
    throw tokenRefused('unknown_user', 'The token names an unknown user.');
  if (state.version !== claims.sv) {
    throw tokenRefused('session_ended', 'The session has ended (password changed).');
  }
  // A token is for one membership: once it ends, the token is as dead as a
  // revoked one (a 401, not the 403 that refuses to issue one).
  const { membership } = state.membership;
  if (membership === null) {
    throw tokenRefused('membership_ended', "The user is no longer a member of the token's tenant.");
  }
  if (membership.generation !== claims.mg) {
    throw tokenRefused('membership_ended', 'The membership the token was issued under has ended.');
  }
}

/** The membership cache's key: tenant ids are DNS labels, so never hold a `/`. */
const membershipKey = (userId: string, tenantId: string): string => `${tenantId}/${userId}`;

/** What a membership event says of its pair; undefined when it does not say (forget the pair). */
function stateAfter(
  event: Extract<SessionEvent, { kind: 'membership-added' | 'membership-removed' }>,
): MembershipState | undefined {
  const { generation } = event;
  if (generation === undefined) return undefined;
  return {
    membership: event.kind === 'membership-added' ? { generation } : null,
    asOf: generation,
  };
}

export interface SessionGuardOptions {
  clockSkewSeconds: number;
  cacheEntries?: number;
  /**
   * Lease mode: hold a revocation lease of this length (ms) and trust the
   * cache only while it is fresh. Only a serving instance holds one; ignored
   * on a store without leases (the memory store lives in one process).
   */
  leaseMs?: number | undefined;
}

export function createSessionGuard(store: Store, options: SessionGuardOptions): SessionGuard {
  const max = options.cacheEntries ?? 100_000;
  const versions = new LRUCache<string, number>({ max });
  /** jti → revoked?; entries live until the token could no longer verify anyway. */
  const revocations = new LRUCache<string, boolean>({ max, ttlAutopurge: false });
  /**
   * `tenant/user` → the pair's state. Ended memberships are kept too, so a
   * refused token costs no store call per request either.
   */
  const memberships = new LRUCache<string, MembershipState>({ max });
  /** Keeps `state` unless what is held already is as new or newer. */
  const learnMembership = (key: string, state: MembershipState): void => {
    const held = memberships.get(key);
    if (held === undefined || state.asOf > held.asOf) memberships.set(key, state);
  };
  const watchers = new Set<SessionEventListener>();
  let live = false;
  /**
   * Moves on every event, every change of liveness and every revocation made
   * here. A store read started in an older epoch may predate an event, so its
   * answer is not cached; a verdict reached in an older epoch is not reused.
   */
  let epoch = 0;
  /**
   * The epoch in which a token (its verified claims, the same object on every
   * cache hit) was last judged alive from the cache: while no event has come
   * since, nothing can have changed its verdict, so the proxy path repeats no
   * lookup. Weak: it goes with the verifier's cache entry.
   */
  const aliveIn = new WeakMap<AccessTokenClaims, number>();
  let hits = 0;
  let misses = 0;

  const drop = (): void => {
    epoch++;
    versions.clear();
    revocations.clear();
    memberships.clear();
  };
  const leases = store.revocationLeases;
  const lease: RevocationLease | undefined =
    options.leaseMs === undefined || leases === undefined
      ? undefined
      : holdRevocationLease(leases, options.leaseMs, {
          onNewLease: drop,
          onFreshness: () => reportTrust(),
        });
  /** Whether a cached verdict may be used now. */
  const trusted = (): boolean => live && (lease === undefined || lease.fresh());
  let reportedTrust = false;
  /** Watchers hear of trust as of liveness: while it is off, verdicts come from the store. */
  function reportTrust(): void {
    const now = trusted();
    if (now === reportedTrust) return;
    reportedTrust = now;
    for (const watcher of watchers) watcher.onLive(now);
  }

  const unwatch = store.watchSessions({
    onEvent(event: SessionEvent) {
      epoch++;
      switch (event.kind) {
        case 'session-ended':
          versions.set(
            event.userId,
            Math.max(event.sessionVersion, versions.get(event.userId) ?? 0),
          );
          break;
        case 'token-revoked':
          revocations.set(event.jti, true);
          break;
        case 'membership-removed':
        case 'membership-added': {
          const key = membershipKey(event.userId, event.tenantId);
          const state = stateAfter(event);
          if (state === undefined) memberships.delete(key);
          else learnMembership(key, state);
          break;
        }
      }
      for (const watcher of watchers) watcher.onEvent(event);
    },
    onLive(value) {
      drop();
      live = value;
      reportTrust();
    },
    onConfirmationRequest(confirmationId) {
      // Its events were applied just before: say so, or the revoker fences this lease.
      if (lease !== undefined && leases !== undefined)
        leases.acknowledge(confirmationId, lease.holderId).catch(() => undefined);
    },
  });

  const ttlOf = (claims: AccessTokenClaims) =>
    Math.max(1, (claims.exp + options.clockSkewSeconds) * 1000 - Date.now());

  function cached(claims: AccessTokenClaims): Partial<SessionState> {
    if (!trusted()) return {};
    const revoked = revocations.get(claims.jti);
    const version = versions.get(claims.sub);
    const membership = memberships.get(membershipKey(claims.sub, claims.tenant_id));
    // A token newer than the cached version or membership: issued after a
    // change whose event has not arrived here yet. Ask the store, never
    // refuse on a guess.
    return {
      revoked,
      version: version !== undefined && claims.sv > version ? undefined : version,
      membership: membership !== undefined && claims.mg > membership.asOf ? undefined : membership,
    };
  }

  const complete = (state: Partial<SessionState>): state is SessionState =>
    state.revoked !== undefined && state.version !== undefined && state.membership !== undefined;

  async function read(claims: AccessTokenClaims): Promise<SessionState> {
    const state = cached(claims);
    if (complete(state)) {
      hits++;
      return state;
    }
    misses++;
    const started = epoch;
    const [revoked, version, membership] = await Promise.all([
      state.revoked ?? store.isTokenRevoked(claims.jti),
      state.version ?? store.getSessionVersion(claims.sub).then((v) => v ?? UNKNOWN_USER),
      state.membership ?? store.readMembership(claims.tenant_id, claims.sub),
    ]);
    if (live && epoch === started) {
      revocations.set(claims.jti, revoked, { ttl: ttlOf(claims) });
      versions.set(claims.sub, version);
      learnMembership(membershipKey(claims.sub, claims.tenant_id), membership);
    }
    return { revoked, version, membership };
  }

  return {
    async assertAlive(claims) {
      judge(claims, await read(claims));
    },
    aliveFromCache(claims) {
      if (aliveIn.get(claims) === epoch && trusted()) {
        hits++;
        return true;
      }
      const state = cached(claims);
      if (!complete(state)) return false;
      hits++;
      judge(claims, state);
      aliveIn.set(claims, epoch);
      return true;
    },
    async revoke(claims) {
      // The verifier accepts a token until exp + skew, so the deny-list entry must outlive that.
      await store.revokeToken(claims.jti, claims.exp + options.clockSkewSeconds);
      epoch++;
      revocations.set(claims.jti, true, { ttl: ttlOf(claims) });
    },
    watch(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    stats: () => ({ live: trusted(), hits, misses }),
    async close() {
      watchers.clear();
      unwatch();
      await lease?.release();
    },
  };
}
