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
import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../bounded-cache.js';
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
 * The cache is keyed by a number made from a token's length and last four
 * characters (its signature's, which nobody but the signer chooses), not by
 * the token: the HTTP parser hands over a new ~480-character string with
 * every request, and a `Map` key is hashed whole — ~4.5k instructions per
 * request for the token (issue 35); a string of its last 32 characters was
 * still hashed, then compared with the stored key (~1k). A number is found
 * at once. A hit is a hit only when the whole token is the one cached, so a
 * token whose key is another's is verified on its own, never taken for it;
 * it only takes that key's place in the cache (one in ~16 million pairs of
 * tokens of one length).
 */
/** A verified token, under its key. */
interface Entry {
  token: string;
  verdict: VerifiedAccessToken;
}

function keyOf(token: string): number {
  const n = token.length;
  if (n < 4) return n;
  // Four characters of 7 bits (base64url is ASCII) and the length: a small
  // integer, which V8 keeps unboxed and a Map finds by its value.
  return (
    ((n << 28) ^
      (token.charCodeAt(n - 1) << 21) ^
      (token.charCodeAt(n - 2) << 14) ^
      (token.charCodeAt(n - 3) << 7) ^
      token.charCodeAt(n - 4)) &
    0x3fffffff
  );
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
  const cache = boundedCache<number, Entry>(options.cacheEntries ?? 50_000);
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
function forgetKeysNotIn(cache: LRUCache<number, Entry>, keys: KeySet): void {
  const stale: number[] = [];
  cache.forEach(({ verdict }, key) => {
    if (!isSameKey(verdict.key, keys.byKid.get(verdict.key.kid))) stale.push(key);
  });
  for (const key of stale) cache.delete(key);
}
