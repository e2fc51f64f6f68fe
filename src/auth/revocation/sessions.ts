/**
 * Session state: whether a verified token is still alive (a machine client's
 * token: `client-sessions.ts`, on the same cache and events). A token dies when
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
import { isGatewayError } from '../../errors.js';
import type { SessionEventListener, Store } from '../../store/types.js';

/** The slices a session guard reads and writes. */
export type SessionStore = Pick<Store, 'users' | 'memberships' | 'clients' | 'revocations'>;
import {
  cachedClientState,
  completeClientState,
  isClientToken,
  judgeClient,
  readClientState,
} from '../clients/client-sessions.js';
import { tokenRefusalOf, tokenRefused } from '../tokens/token-refusals.js';
import { holdRevocationLease } from './revocation-lease.js';
import { SessionCache, type SessionState, UNKNOWN_USER } from './session-cache.js';
import type { AccessTokenClaims } from '../tokens/tokens.js';

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
  /**
   * For caches built on the same events (API keys, `api-keys.ts`): -1 while
   * what was learnt from the store may not be used (events not delivered or,
   * in lease mode, the lease not fresh); else a number that moves each time
   * the guard drops what it knew (delivery restarted, a new lease), so that
   * knowledge gained under another number is not used either.
   */
  trust(): number;
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

export interface SessionGuardOptions {
  clockSkewSeconds: number;
  cacheEntries?: number;
  /**
   * Lease mode: hold a revocation lease of this length (ms) and trust the
   * cache only while it is fresh. Only a serving instance holds one; ignored
   * on a store without leases (the memory store lives in one process).
   */
  leaseMs?: number | undefined;
  /**
   * A machine client's token presented after its client was removed or
   * rotated (`client_ended`): for the audit log, at most once a minute per token.
   */
  onClientEnded?: ((claims: AccessTokenClaims) => void) | undefined;
}

export function createSessionGuard(
  store: SessionStore,
  options: SessionGuardOptions,
): SessionGuard {
  const cache = new SessionCache(options.cacheEntries ?? 100_000);
  const skew = options.clockSkewSeconds;
  const leases = store.revocations.leases;
  const lease =
    options.leaseMs === undefined || leases === undefined
      ? undefined
      : holdRevocationLease(leases, options.leaseMs, {
          onNewLease: () => cache.drop(),
          onFreshness: () => cache.reportTrust(),
        });
  cache.lease = lease;

  const judgeClientToken = reportingEnded(options.onClientEnded);

  const unwatch = store.revocations.watchSessions({
    onEvent: (event) => cache.apply(event),
    onLive: (value) => cache.setLive(value),
    onConfirmationRequest(confirmationId) {
      // Its events were applied just before: say so, or the revoker fences this lease.
      if (lease !== undefined && leases !== undefined)
        leases.acknowledge(confirmationId, lease.holderId).catch(() => undefined);
    },
  });

  return {
    async assertAlive(claims) {
      if (isClientToken(claims))
        judgeClientToken(claims, await readClientState(store, cache, claims, ttlOf(claims, skew)));
      else judge(claims, await read(store, cache, skew, claims));
    },
    aliveFromCache(claims) {
      if (cache.aliveIn.get(claims) === cache.epoch && cache.trusted()) {
        cache.hits++;
        return true;
      }
      if (isClientToken(claims)) {
        const state = cachedClientState(cache, claims);
        if (!completeClientState(state)) return false;
        cache.hits++;
        judgeClientToken(claims, state);
      } else {
        const state = cache.cached(claims);
        if (!complete(state)) return false;
        cache.hits++;
        judge(claims, state);
      }
      cache.aliveIn.set(claims, cache.epoch);
      return true;
    },
    async revoke(claims) {
      // The verifier accepts a token until exp + skew, so the deny-list entry must outlive that.
      await store.revocations.revokeToken(claims.jti, claims.exp + skew);
      cache.revoked(claims.jti, ttlOf(claims, skew));
    },
    watch(listener: SessionEventListener) {
      cache.watchers.add(listener);
      return () => cache.watchers.delete(listener);
    },
    trust: () => (cache.trusted() ? cache.drops : -1),
    stats: () => ({ live: cache.trusted(), hits: cache.hits, misses: cache.misses }),
    async close() {
      cache.watchers.clear();
      unwatch();
      await lease?.release();
    },
  };
}

/** {@link judgeClient}, telling `onEnded` of a token whose client ended, once a minute per token. */
function reportingEnded(
  onEnded: ((claims: AccessTokenClaims) => void) | undefined,
): typeof judgeClient {
  if (onEnded === undefined) return judgeClient;
  const reported = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
  return (claims, state) => {
    try {
      judgeClient(claims, state);
    } catch (err) {
      if (
        isGatewayError(err) &&
        tokenRefusalOf(err) === 'client_ended' &&
        !reported.has(claims.jti)
      ) {
        reported.set(claims.jti, true);
        onEnded(claims);
      }
      throw err;
    }
  };
}

/** How long (ms) a token's revocation entry is worth keeping: until it could no longer verify. */
const ttlOf = (claims: AccessTokenClaims, skew: number): number =>
  Math.max(1, (claims.exp + skew) * 1000 - Date.now());

const complete = (state: Partial<SessionState>): state is SessionState =>
  state.revoked !== undefined && state.version !== undefined && state.membership !== undefined;

/** The token's state: from the cache when it can tell, else from the store (then kept). */
async function read(
  store: Pick<Store, 'users' | 'memberships' | 'revocations'>,
  cache: SessionCache,
  skew: number,
  claims: AccessTokenClaims,
): Promise<SessionState> {
  const state = cache.cached(claims);
  if (complete(state)) {
    cache.hits++;
    return state;
  }
  cache.misses++;
  const started = cache.epoch;
  const [revoked, version, membership] = await Promise.all([
    state.revoked ?? store.revocations.isTokenRevoked(claims.jti),
    state.version ?? store.users.getSessionVersion(claims.sub).then((v) => v ?? UNKNOWN_USER),
    state.membership ?? store.memberships.readMembership(claims.tenant_id, claims.sub),
  ]);
  const stored = { revoked, version, membership };
  if (cache.live && cache.epoch === started) cache.remember(claims, stored, ttlOf(claims, skew));
  return stored;
}
