/**
 * Verified-token cache: a token string already verified is not verified
 * again until it expires. Signature checks, not proxying, are what a gateway
 * spends its CPU on; this makes them once per token instead of once per
 * request. Bounded (LRU), so a flood of distinct tokens cannot grow memory —
 * and only tokens that verified are cached, so garbage never displaces them.
 * Session state (revocation, password change) is checked on every request
 * regardless, by the session guard. Unknown kids re-read the key directory
 * (`key-reloads.ts`).
 */
import { LRUCache } from 'lru-cache';
import { KeyReloads } from './key-reloads.js';
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
  let hits = 0;
  let misses = 0;
  const reloads = new KeyReloads(keyring, {
    intervalMs: options.keyReloadIntervalMs ?? KEY_RELOAD_INTERVAL_MS,
    onKeysRemoved: (keys) => forgetKeysNotIn(cache, keys),
    log: options.log,
  });
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
          if (!(err instanceof UnknownKeyError) || !(await reloads.reload())) throw err;
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

/** Drops the verdicts of tokens whose key is no longer in the set: a removed key stops verifying. */
function forgetKeysNotIn(cache: LRUCache<string, VerifiedAccessToken>, keys: KeySet): void {
  const stale: string[] = [];
  cache.forEach((verdict, token) => {
    if (!isSameKey(verdict.key, keys.byKid.get(verdict.key.kid))) stale.push(token);
  });
  for (const token of stale) cache.delete(token);
}
