/**
 * Session state: whether a verified token is still alive. A token dies when
 * its `jti` is deny-listed (logout) or when the user's session version has
 * moved past the one it carries (password change). Both live in the store,
 * so the verdict is the same on every instance.
 *
 * The state is cached in process so that a steady stream of requests makes no
 * store call, and kept exact by the store's session events (Redis pub/sub):
 * a password change or logout on any instance reaches every cache within one
 * pub/sub hop. Whenever event delivery is not live the cache is dropped and
 * not used — every request reads the store, and with the store unreachable
 * that is a 503, never a guess.
 */
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../errors.js';
import type { SessionEvent, Store } from '../store/types.js';
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
  /** Cache figures, for metrics. */
  stats(): SessionCacheStats;
  close(): void;
}

export interface SessionCacheStats {
  live: boolean;
  hits: number;
  misses: number;
}

/** A user the store does not know: every token of theirs is dead. */
const UNKNOWN_USER = -1;

function judge(claims: AccessTokenClaims, state: { revoked: boolean; version: number }): void {
  if (state.revoked) throw new GatewayError('invalid_token', 'The token has been revoked.');
  if (state.version === UNKNOWN_USER)
    throw new GatewayError('invalid_token', 'The token names an unknown user.');
  if (state.version !== claims.sv) {
    throw new GatewayError('invalid_token', 'The session has ended (password changed).');
  }
}

export function createSessionGuard(
  store: Store,
  options: { clockSkewSeconds: number; cacheEntries?: number },
): SessionGuard {
  const max = options.cacheEntries ?? 100_000;
  const versions = new LRUCache<string, number>({ max });
  /** jti → revoked?; entries live until the token could no longer verify anyway. */
  const revocations = new LRUCache<string, boolean>({ max, ttlAutopurge: false });
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

  const unwatch = store.watchSessions({
    onEvent(event: SessionEvent) {
      epoch++;
      if (event.kind === 'session-ended') {
        versions.set(event.userId, Math.max(event.sessionVersion, versions.get(event.userId) ?? 0));
      } else {
        revocations.set(event.jti, true);
      }
    },
    onLive(value) {
      epoch++;
      versions.clear();
      revocations.clear();
      live = value;
    },
  });

  const ttlOf = (claims: AccessTokenClaims) =>
    Math.max(1, (claims.exp + options.clockSkewSeconds) * 1000 - Date.now());

  function cached(claims: AccessTokenClaims): { revoked?: boolean; version?: number } {
    if (!live) return {};
    const revoked = revocations.get(claims.jti);
    const version = versions.get(claims.sub);
    // A token newer than the cached version: issued after a password change
    // whose event has not arrived here yet. Ask the store, never refuse on a guess.
    return { revoked, version: version !== undefined && claims.sv > version ? undefined : version };
  }

  async function read(claims: AccessTokenClaims): Promise<{ revoked: boolean; version: number }> {
    let { revoked, version } = cached(claims);
    if (revoked !== undefined && version !== undefined) {
      hits++;
      return { revoked, version };
    }
    misses++;
    const started = epoch;
    const [storedRevoked, storedVersion] = await Promise.all([
      revoked ?? store.isTokenRevoked(claims.jti),
      version ?? store.getSessionVersion(claims.sub).then((v) => v ?? UNKNOWN_USER),
    ]);
    revoked = storedRevoked;
    version = storedVersion;
    if (live && epoch === started) {
      revocations.set(claims.jti, revoked, { ttl: ttlOf(claims) });
      versions.set(claims.sub, version);
    }
    return { revoked, version };
  }

  return {
    async assertAlive(claims) {
      judge(claims, await read(claims));
    },
    aliveFromCache(claims) {
      if (live && aliveIn.get(claims) === epoch) {
        hits++;
        return true;
      }
      const { revoked, version } = cached(claims);
      if (revoked === undefined || version === undefined) return false;
      hits++;
      judge(claims, { revoked, version });
      aliveIn.set(claims, epoch);
      return true;
    },
    async revoke(claims) {
      // The verifier accepts a token until exp + skew, so the deny-list entry must outlive that.
      await store.revokeToken(claims.jti, claims.exp + options.clockSkewSeconds);
      epoch++;
      revocations.set(claims.jti, true, { ttl: ttlOf(claims) });
    },
    stats: () => ({ live, hits, misses }),
    close: unwatch,
  };
}
