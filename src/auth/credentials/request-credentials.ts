/**
 * What a route takes as a credential: a bearer token, or — where
 * `apiKeys.enabled` — a machine client's API key, sent as
 * `Authorization: Bearer tgk_…` or in the configured header (`X-API-Key`);
 * which one a request presents is read by `credentials/read-credential.ts`
 * (two at once: refused). The api's own Bearer endpoints (`/1/…`) take
 * tokens only ({@link Authenticate}).
 */
import type { ApiKeys } from '../clients/api-keys.js';
import type { Authenticate, Principal } from './authenticate.js';
import { isExactBearer, readCredential } from './read-credential.js';

/**
 * The principal of a request to a route: synchronous when its credential is
 * known here (the steady state), else a promise.
 * @param apiKey the API key header's value (undefined: absent, or keys off)
 */
export type AuthenticateRequest = (
  authorization: string | undefined,
  apiKey: string | undefined,
) => Principal | Promise<Principal>;

/** Tokens only when `apiKeys` is undefined (keys off): the header is then not read at all. */
export function createRequestAuthenticator(
  authenticate: Authenticate,
  apiKeys: ApiKeys | undefined,
): AuthenticateRequest {
  // Keys off: the bearer path itself (it ignores the key argument), no wrapper on every request.
  if (apiKeys === undefined) return authenticate;
  return (authorization, apiKey) => {
    // The steady state (`Bearer <JWT>` spelled exactly): prefix tests, then the token's own path.
    if (apiKey === undefined && isExactBearer(authorization, true))
      return authenticate(authorization);
    const credential = readCredential(authorization, apiKey);
    // Not a key: a token (read alike where only tokens are taken), or the refusal for none.
    return credential.kind === 'api_key'
      ? apiKeys.authenticate(credential.key)
      : authenticate(authorization);
  };
}
