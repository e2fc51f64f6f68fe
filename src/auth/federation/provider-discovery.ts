/**
 * A provider's discovery document (`{issuer}/.well-known/openid-configuration`),
 * read once for the keys and the browser sign-in, and checked before any URL
 * in it is used (OpenID Connect Discovery §4.3, issue 42 finding 7):
 *
 * - its `issuer` is the configured one exactly;
 * - `jwks_uri` (and `token_endpoint` where given) are https URLs — reached
 *   only through the provider fetcher, which connects to public addresses only
 *   (`https-json.ts`);
 * - `authorization_endpoint` (where given) is on the issuer's own origin: the
 *   gateway sends browsers there, so a tenant's discovery document naming
 *   another host would make `/1/tenants/{t}/sso/login` an open redirect. A
 *   document breaking this is refused as a whole: the provider is unusable.
 * - `end_session_endpoint` (OpenID Connect RP-Initiated Logout 1.0 §2.1) is
 *   kept only when it is an https URL on the issuer's origin, for the same
 *   reason (a sign-out sends the browser there); any other is ignored, not
 *   fatal: the provider still signs people in, the gateway only does not send
 *   them to its logout.
 *
 * A document is kept `sso.keysMaxAgeSeconds`; a failure (fetch or check)
 * `sso.failureCacheSeconds`; concurrent reads share one fetch.
 */
import { LRUCache } from 'lru-cache';
import type { ProviderHttp } from './https-json.js';

export interface ProviderEndpoints {
  jwksUri: string;
  /** Undefined when the document names none (then there is no browser sign-in). */
  authorization?: string;
  token?: string;
  /** RP-initiated logout's endpoint; undefined when the document names none on the issuer's origin. */
  endSession?: string;
}

export interface ProviderDiscovery {
  /** @throws Error when the document cannot be had or does not fit. */
  endpointsOf(issuer: string): Promise<ProviderEndpoints>;
}

export interface ProviderDiscoveryOptions {
  http: ProviderHttp;
  maxAgeMs: number;
  failureCacheMs: number;
  maxProviders: number;
}

type Outcome = { endpoints: ProviderEndpoints } | { failure: Error };

export function createProviderDiscovery(options: ProviderDiscoveryOptions): ProviderDiscovery {
  const cache = new LRUCache<string, Outcome>({ max: options.maxProviders, ttl: 1 });
  const pending = new Map<string, Promise<Outcome>>();
  const discover = async (issuer: string): Promise<Outcome> => {
    try {
      const document = await options.http.getJson(discoveryUrl(issuer));
      return { endpoints: endpointsIn(document, issuer) };
    } catch (err) {
      return { failure: err instanceof Error ? err : new Error(String(err)) };
    }
  };
  const settled = (outcome: Outcome): ProviderEndpoints => {
    if ('failure' in outcome) throw outcome.failure;
    return outcome.endpoints;
  };
  return {
    async endpointsOf(issuer) {
      const cached = cache.get(issuer);
      if (cached !== undefined) return settled(cached);
      let found = pending.get(issuer);
      if (found === undefined) {
        found = discover(issuer).then((outcome) => {
          const ttl = 'failure' in outcome ? options.failureCacheMs : options.maxAgeMs;
          if (ttl > 0) cache.set(issuer, outcome, { ttl });
          pending.delete(issuer);
          return outcome;
        });
        pending.set(issuer, found);
      }
      return settled(await found);
    },
  };
}

/** OpenID Connect Discovery §4: the issuer's trailing slash is not doubled. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
}

function endpointsIn(document: unknown, issuer: string): ProviderEndpoints {
  const url = discoveryUrl(issuer);
  if (typeof document !== 'object' || document === null) throw new Error(`${url}: not an object`);
  const fields = document as Record<string, unknown>;
  if (fields['issuer'] !== issuer)
    throw new Error(`${url}: issuer ${String(fields['issuer'])} is not ${issuer}`);
  const jwksUri = httpsUrl(fields, 'jwks_uri', url, true) as string;
  const authorization = httpsUrl(fields, 'authorization_endpoint', url, false);
  const token = httpsUrl(fields, 'token_endpoint', url, false);
  if (authorization !== undefined && new URL(authorization).origin !== new URL(issuer).origin)
    throw new Error(`${url}: authorization_endpoint is not on the issuer's origin`);
  const endSession = endSessionIn(fields, issuer);
  return {
    jwksUri,
    ...(authorization === undefined ? {} : { authorization }),
    ...(token === undefined ? {} : { token }),
    ...(endSession === undefined ? {} : { endSession }),
  };
}

/** `end_session_endpoint` when an https URL on the issuer's origin; else none (see the file header). */
function endSessionIn(fields: Record<string, unknown>, issuer: string): string | undefined {
  const value = fields['end_session_endpoint'];
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'https:' && url.origin === new URL(issuer).origin ? value : undefined;
}

function httpsUrl(
  fields: Record<string, unknown>,
  name: string,
  url: string,
  required: boolean,
): string | undefined {
  const value = fields[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !URL.canParse(value) || new URL(value).protocol !== 'https:')
    throw new Error(`${url}: ${name} is not an https URL`);
  return value;
}
