/**
 * The OAuth client-credentials grant (RFC 6749 §4.4): a machine client's id
 * and secret → an access token for its tenant with the scopes asked for
 * (or all it holds). Wrong secrets are counted per client IP and per client
 * id and IP (`brute-force.ts`), never per client id alone: an id is public
 * (`X-Client-Id`, logs), so whoever knows one locks out only their own
 * address, never the right secret from another.
 *
 * The client holds its stored scopes as far as the live config still allows
 * (`client-scope-bounds.ts`): a reload that takes a scope from
 * `authorization.clientScopes` or from the role `admin` is in every token
 * issued after it. A token issued before keeps its `scope` until it expires
 * (`tokens.ttlSeconds`), as a member's token does.
 */
import { GatewayError } from '../../errors.js';
import type { ClientRecord, Store } from '../../store/types.js';
import type { BruteForceGuard, LoginOutcome } from '../passwords/brute-force.js';
import { liveClientScopes, type ClientScopeBounds } from './client-scope-bounds.js';
import { issueClientToken } from './client-tokens.js';
import { isClientId, secretMatches } from './secrets.js';
import type { AccessTokenClaims, KeyRing, TokenSettings } from '../tokens/tokens.js';

export interface ClientCredentialsDeps extends ClientScopeBounds {
  store: Store;
  keyring: KeyRing;
  tokens: TokenSettings;
  bruteForce: BruteForceGuard;
  now?: () => number;
}

export interface ClientGrantRequest {
  clientId: string;
  clientSecret: string;
  /** The `scope` parameter as sent; undefined or blank: every scope the client holds. */
  scope: string | undefined;
  clientIp: string;
}

export interface ClientGrant {
  token: string;
  claims: AccessTokenClaims;
  client: ClientRecord;
  scopes: string[];
}

export type GrantClientToken = (request: ClientGrantRequest) => Promise<ClientGrant>;

/** The one answer to an unknown client, a wrong secret and an expired client (no oracle). */
export const invalidClient = (): GatewayError =>
  new GatewayError('invalid_client', 'The client id or secret is wrong, or the client expired.');

/** Any malformed id shares one budget per IP: it can lock out no real client. */
const MALFORMED_ID = '(malformed client id)';
/** Compared against when there is no client, so an unknown id costs a digest too. */
const NO_DIGEST = '0'.repeat(64);
/** RFC 6749 §3.3 scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function createClientCredentials(deps: ClientCredentialsDeps): GrantClientToken {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  return async (request) => {
    const wellFormed = isClientId(request.clientId);
    const attempt = await deps.bruteForce.beginClientLogin(
      wellFormed ? request.clientId : MALFORMED_ID,
      request.clientIp,
    );
    let outcome: LoginOutcome = 'abandoned';
    try {
      const client = wellFormed ? await deps.store.clients.getClient(request.clientId) : null;
      const matches = secretMatches(request.clientSecret, client?.secretDigest ?? NO_DIGEST);
      if (client === null || !matches) {
        outcome = 'failed';
        throw invalidClient();
      }
      outcome = 'succeeded';
      const at = now();
      if (client.expiresAt !== undefined && client.expiresAt <= at) throw invalidClient();
      const scopes = grantedScopes(liveClientScopes(client, deps), request.scope);
      const { token, claims } = await issueClientToken(
        deps.keyring,
        deps.tokens,
        client,
        scopes,
        at,
      );
      return { token, claims, client, scopes };
    } finally {
      await attempt.end(outcome);
    }
  };
}

/**
 * The scopes asked for, each one of `holds` (what the client holds now:
 * sorted, without duplicates); all of them when none are asked for.
 * @throws GatewayError `invalid_scope`
 */
export function grantedScopes(holds: readonly string[], requested: string | undefined): string[] {
  const asked = (requested ?? '').split(' ').filter((s) => s !== '');
  if (asked.length === 0) return [...holds];
  const held = new Set(holds);
  for (const scope of asked) {
    if (!SCOPE_TOKEN.test(scope) || !held.has(scope)) {
      throw new GatewayError('invalid_scope', 'A requested scope is not granted to the client.');
    }
  }
  return [...new Set(asked)].sort();
}
