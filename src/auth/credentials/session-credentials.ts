/**
 * What a route with `auth: session` takes as a credential: what every route
 * takes (a bearer token, an API key where they are on:
 * `request-credentials.ts`), and — when the request sends neither — the
 * browser session's cookie (`sessions.cookie.name`), read by
 * `read-credential.ts` and turned into its principal by the browser sessions
 * service (`../sessions/browser-sessions.ts`). A bearer sent beside the cookie
 * wins: a browser attaches the cookie to an app's own bearer fetches, and the
 * app asked for the token's identity.
 */
import type { CookieHeader } from '../../text/cookies.js';
import type { BrowserSessions } from '../sessions/browser-sessions.js';
import type { Principal } from './authenticate.js';
import { presentsCredential, readSessionCredential } from './read-credential.js';
import type { AuthenticateRequest } from './request-credentials.js';

/**
 * The principal of a request to a session route: synchronous when its token
 * or its session is known here (the steady state), else a promise.
 * @throws GatewayError `invalid_token` (or rejects with it): no credential,
 *   a refused one, two session cookies
 */
export type AuthenticateSessionRequest = (
  authorization: string | undefined,
  apiKey: string | undefined,
  cookie: CookieHeader,
) => Principal | Promise<Principal>;

/**
 * @param authenticate what every route takes
 *   (`request-credentials.ts` `createRequestAuthenticator`)
 * @param sessions the service that knows sessions (only `principal` is used)
 * @param cookieName `sessionCookieName(config.sessions)`
 */
export function createSessionRequestAuthenticator(
  authenticate: AuthenticateRequest,
  sessions: Pick<BrowserSessions, 'principal'>,
  cookieName: string,
): AuthenticateSessionRequest {
  return (authorization, apiKey, cookie) => {
    // A bearer or API key wins: the cookie is not even read.
    if (presentsCredential(authorization, apiKey)) return authenticate(authorization, apiKey);
    const credential = readSessionCredential(authorization, apiKey, cookie, cookieName);
    return credential.kind === 'session'
      ? sessions.principal(credential.value)
      : authenticate(authorization, apiKey);
  };
}
