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
import {
  UnknownKeyError,
  verifyAccessToken,
  type AccessTokenClaims,
  type KeyRing,
  type TokenSettings,
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
  options: { cacheEntries?: number; log?: { warn(obj: object, msg: string): void } } = {},
): TokenVerifier {
  const cache = new LRUCache<string, AccessTokenClaims>({ max: options.cacheEntries ?? 50_000 });
  let hits = 0;
  let misses = 0;
  let lastReload = 0;
  /** At most one reload per interval, so unknown kids cannot make us read the disk per request. */
  async function reloadKeys(): Promise<boolean> {
    if (keyring.reload === undefined || Date.now() - lastReload < KEY_RELOAD_INTERVAL_MS)
      return false;
    lastReload = Date.now();
    try {
      await keyring.reload();
    } catch (err) {
      // A broken key directory must not turn a refusal into a 500: keep the keys we have.
      options.log?.warn({ err }, 'key directory reload failed; keeping the loaded keys');
      return false;
    }
    cache.clear();
    return true;
  }
  function peek(token: string): AccessTokenClaims | undefined {
    const cached = cache.get(token);
    if (cached === undefined) return undefined;
    // Expiry is still checked on every use: the cache never extends a token's life.
    if ((cached.exp + settings.clockSkewSeconds) * 1000 > Date.now()) {
      hits++;
      return cached;
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
      const claims = await verifyAccessToken(keyring, settings, token).catch(
        async (err: unknown) => {
          if (!(err instanceof UnknownKeyError) || !(await reloadKeys())) throw err;
          return verifyAccessToken(keyring, settings, token);
        },
      );
      const ttl = (claims.exp + settings.clockSkewSeconds) * 1000 - Date.now();
      if (ttl > 0) cache.set(token, claims, { ttl });
      return claims;
    },
    clear: () => cache.clear(),
    stats: () => ({ hits, misses, size: cache.size }),
  };
}
