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

/**
 * The cache is keyed by a token's last characters (its signature's), not the
 * whole token: the HTTP parser hands over a new ~480-character string with
 * every request, and a `Map` key is hashed whole — ~4.5k instructions per
 * request for the token, the gateway's largest lookup (issue 35). A hit is a
 * hit only when the whole token is the one cached, so a token that shares
 * its tail with a verified one is verified on its own, never taken for it.
 */
const KEY_CHARACTERS = 32;

/** A verified token, under its key. */
interface Entry {
  token: string;
  verdict: VerifiedAccessToken;
}

function keyOf(token: string): string {
  return token.length <= KEY_CHARACTERS ? token : token.slice(-KEY_CHARACTERS);
}

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
  const cache = new LRUCache<string, Entry>({
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
    const key = keyOf(token);
    const entry = cache.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    const cached = entry.verdict;
    // Expiry is still checked on every use: the cache never extends a token's life.
    if ((cached.claims.exp + settings.clockSkewSeconds) * 1000 > Date.now()) {
      hits++;
      return cached.claims;
    }
    cache.delete(key);
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
      // No ttl of the cache's own: `peek` checks `exp` on every use anyway
      // (and drops an expired entry), and the cache's clock would cost every
      // hit a `performance.now()` and a staleness test (issue 35).
      if ((claims.exp + settings.clockSkewSeconds) * 1000 > Date.now())
        cache.set(keyOf(token), { token, verdict });
      return claims;
    },
    clear: () => cache.clear(),
    stats: () => ({ hits, misses, size: cache.size }),
  };
}

/** Drops the verdicts of tokens whose key is no longer in the set: a removed key stops verifying. */
function forgetKeysNotIn(cache: LRUCache<string, Entry>, keys: KeySet): void {
  const stale: string[] = [];
  cache.forEach(({ verdict }, key) => {
    if (!isSameKey(verdict.key, keys.byKid.get(verdict.key.kid))) stale.push(key);
  });
  for (const key of stale) cache.delete(key);
}
