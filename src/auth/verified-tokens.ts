/**
 * Verified-token cache: a token string already verified is not verified
 * again until it expires. Signature checks, not proxying, are what a gateway
 * spends its CPU on; this makes them once per token instead of once per
 * request. Bounded (LRU), so a flood of distinct tokens cannot grow memory —
 * and only tokens that verified are cached, so garbage never displaces them.
 * Session state (revocation, password change) is checked on every request
 * regardless, by the session guard.
 */
import { LRUCache } from 'lru-cache';
import { isSameKey, type KeySet } from './keys.js';
import {
  UnknownKeyError,
  verifyAccessToken,
  type AccessTokenClaims,
  type KeyRing,
  type TokenSettings,
  type VerifiedAccessToken,
} from './tokens.js';

const KEY_RELOAD_INTERVAL_MS = 10_000;

export interface TokenVerifier {
  /** @throws GatewayError `invalid_token` */
  verify(token: string): Promise<AccessTokenClaims>;
  /** The claims of a token verified before and not yet expired, without any await; else undefined. */
  peek(token: string): AccessTokenClaims | undefined;
  /** Forget every verdict (after the key set changed). */
  clear(): void;
  stats(): { hits: number; misses: number; size: number };
}

export function createTokenVerifier(
  keyring: KeyRing,
  settings: TokenSettings,
  options: {
    cacheEntries?: number;
    /** Least time between two key directory re-reads for unknown kids (default 10 s). */
    keyReloadIntervalMs?: number;
    log?: { warn(obj: object, msg: string): void };
  } = {},
): TokenVerifier {
  const cache = new LRUCache<string, VerifiedAccessToken>({
    max: options.cacheEntries ?? 50_000,
  });
  const reloadInterval = options.keyReloadIntervalMs ?? KEY_RELOAD_INTERVAL_MS;
  let hits = 0;
  let misses = 0;
  let lastReload = -Infinity;
  let reloading: Promise<boolean> | undefined;

  /**
   * Re-reads the key directory for a token whose `kid` is unknown. Anyone can
   * send such a token, so: at most one read per interval, shared
   * by every request that meets an unknown kid meanwhile (a token of a key
   * just added waits for the read under way instead of being refused), and
   * the cache loses only the verdicts of keys that were removed or replaced.
   * @returns whether a read completed, so that a retry may succeed
   */
  function reloadKeys(): Promise<boolean> {
    if (reloading !== undefined) return reloading;
    const reload = keyring.reload;
    if (reload === undefined || Date.now() - lastReload < reloadInterval)
      return Promise.resolve(false);
    lastReload = Date.now();
    const before = keyring.current;
    reloading = reload()
      .then(
        () => {
          if (!keepsEveryKey(before, keyring.current)) forgetKeysNotIn(keyring.current);
          return true;
        },
        (err: unknown) => {
          // A broken key directory must not turn a refusal into a 500: keep the keys we have.
          options.log?.warn({ err }, 'key directory reload failed; keeping the loaded keys');
          return false;
        },
      )
      .finally(() => {
        reloading = undefined;
      });
    return reloading;
  }
  /** Drops the verdicts of tokens whose key is no longer in the set: a removed key stops verifying. */
  function forgetKeysNotIn(keys: KeySet): void {
    const stale: string[] = [];
    cache.forEach((verdict, token) => {
      if (!isSameKey(verdict.key, keys.byKid.get(verdict.key.kid))) stale.push(token);
    });
    for (const token of stale) cache.delete(token);
  }
  function peek(token: string): AccessTokenClaims | undefined {
    const cached = cache.get(token);
    if (cached === undefined) return undefined;
    // Expiry is still checked on every use: the cache never extends a token's life.
    if ((cached.claims.exp + settings.clockSkewSeconds) * 1000 > Date.now()) {
      hits++;
      return cached.claims;
    }
    cache.delete(token);
    return undefined;
  }
  return {
    peek,
    async verify(token) {
      const cached = peek(token);
      if (cached !== undefined) return cached;
      misses++;
      const verdict = await verifyAccessToken(keyring, settings, token).catch(
        async (err: unknown) => {
          if (!(err instanceof UnknownKeyError) || !(await reloadKeys())) throw err;
          return verifyAccessToken(keyring, settings, token);
        },
      );
      const { claims, key } = verdict;
      // A re-read while this token was being verified removed its key: a removed
      // key stops verifying, even for a verdict already under way.
      if (!isSameKey(key, keyring.current.byKid.get(key.kid))) throw new UnknownKeyError();
      const ttl = (claims.exp + settings.clockSkewSeconds) * 1000 - Date.now();
      if (ttl > 0) cache.set(token, verdict, { ttl });
      return claims;
    },
    clear: () => cache.clear(),
    stats: () => ({ hits, misses, size: cache.size }),
  };
}

/** Whether every key of `before` is still in `after`, unchanged (keys may have been added). */
function keepsEveryKey(before: KeySet, after: KeySet): boolean {
  for (const key of before.byKid.values())
    if (!isSameKey(key, after.byKid.get(key.kid))) return false;
  return true;
}
