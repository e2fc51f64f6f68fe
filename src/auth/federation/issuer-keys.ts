/**
 * Each provider's signing keys, by issuer: its discovery document
 * (`provider-discovery.ts`: whose `issuer` must be the configured one exactly,
 * OpenID Connect Discovery §4.3) and its JWKS, as a jose remote key set — cached `sso.keysMaxAgeSeconds`, refetched on an
 * unknown `kid` at most once per `sso.unknownKeyCooldownSeconds`, concurrent
 * fetches shared. At most `sso.maxProviders` issuers are cached (least
 * recently used dropped). Only an issuer a tenant's record names is ever
 * looked up (the caller checks first), so a token cannot make the gateway
 * fetch from a host of its choosing.
 */
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { ProviderHttp } from './https-json.js';
import type { ProviderDiscovery } from './provider-discovery.js';

export interface IssuerKeysOptions {
  http: ProviderHttp;
  discovery: ProviderDiscovery;
  timeoutMs: number;
  keysMaxAgeMs: number;
  unknownKeyCooldownMs: number;
  maxProviders: number;
}

export interface IssuerKeys {
  /**
   * The key lookup for tokens of `issuer` (discovered on first use).
   * @throws Error when the discovery document cannot be had or does not fit.
   */
  keysFor(issuer: string): Promise<JWTVerifyGetKey>;
}

export function createIssuerKeys(options: IssuerKeysOptions): IssuerKeys {
  const cache = new LRUCache<string, JWTVerifyGetKey>({
    max: options.maxProviders,
    // The discovery document is read again as often as the keys would be.
    ttl: options.keysMaxAgeMs,
  });
  const pending = new Map<string, Promise<JWTVerifyGetKey>>();
  const discover = async (issuer: string): Promise<JWTVerifyGetKey> => {
    const { jwksUri } = await options.discovery.endpointsOf(issuer);
    return createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: options.timeoutMs,
      cacheMaxAge: options.keysMaxAgeMs,
      cooldownDuration: options.unknownKeyCooldownMs,
      [customFetch]: (url, init) => options.http.jwksFetch(url, init),
    });
  };
  return {
    keysFor(issuer) {
      const cached = cache.get(issuer);
      if (cached !== undefined) return Promise.resolve(cached);
      let found = pending.get(issuer);
      if (found === undefined) {
        found = discover(issuer)
          .then((keys) => {
            cache.set(issuer, keys);
            return keys;
          })
          .finally(() => pending.delete(issuer));
        pending.set(issuer, found);
      }
      return found;
    },
  };
}
