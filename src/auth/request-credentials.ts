/**
 * What a route takes as a credential: a bearer token, or — where
 * `apiKeys.enabled` — a machine client's API key, sent as
 * `Authorization: Bearer tgk_…` or in the configured header (`X-API-Key`).
 * One credential per request (RFC 6750 §2: a client uses one method): an
 * API key header beside a bearer Authorization is refused. The api's own
 * Bearer endpoints (`/1/…`) take tokens only ({@link Authenticate}).
 */
import { GatewayError } from '../errors.js';
import type { ApiKeys } from './api-keys.js';
import type { Authenticate, Principal } from './authenticate.js';
import { parseBearerAuthorization } from './bearer.js';
import { API_KEY_PREFIX } from './secrets.js';

/**
 * The principal of a request to a route: synchronous when its credential is
 * known here (the steady state), else a promise.
 * @param apiKey the API key header's value (undefined: absent, or keys off)
 */
export type AuthenticateRequest = (
  authorization: string | undefined,
  apiKey: string | undefined,
) => Principal | Promise<Principal>;

const BEARER_PREFIX = 'Bearer ';
/** RFC 9110 §11.4: the scheme, then a space or nothing. */
const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i;

const TWO_CREDENTIALS = new GatewayError(
  'invalid_request',
  'Send one credential: a bearer token or an API key, not both.',
);

/** Tokens only when `apiKeys` is undefined (keys off): the header is then not read at all. */
export function createRequestAuthenticator(
  authenticate: Authenticate,
  apiKeys: ApiKeys | undefined,
): AuthenticateRequest {
  // Keys off: the bearer path itself (it ignores the key argument), no wrapper on every request.
  if (apiKeys === undefined) return authenticate;
  return (authorization, apiKey) => {
    if (apiKey !== undefined) {
      if (authorization !== undefined && BEARER_SCHEME.test(authorization)) throw TWO_CREDENTIALS;
      return apiKeys.authenticate(apiKey);
    }
    const key = bearerApiKey(authorization);
    return key === undefined ? authenticate(authorization) : apiKeys.authenticate(key);
  };
}

/**
 * The API key in a bearer Authorization, if that is what it holds. The proxy
 * path's steady state (`Bearer <JWT>`, spelled exactly) costs two prefix
 * tests; any other spelling takes the full parse.
 */
function bearerApiKey(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  if (authorization.startsWith(BEARER_PREFIX) && authorization[7] !== ' ') {
    return authorization.startsWith(API_KEY_PREFIX, 7)
      ? parseBearerAuthorization(authorization)
      : undefined;
  }
  if (!BEARER_SCHEME.test(authorization)) return undefined;
  const token = parseBearerAuthorization(authorization);
  return token.startsWith(API_KEY_PREFIX) ? token : undefined;
}
