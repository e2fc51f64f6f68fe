/**
 * A page load on an `auth: session` route without a session is sent to sign
 * in (issue 44): 302 to `/1/sign-in?return_to=<the path and query>`, relative,
 * so that the sign-in happens on the host the app is on and its `__Host-`
 * cookie is set there. Anything else keeps its 401 `invalid_token`: a script's
 * fetch, a WebSocket or an API client cannot follow a sign-in page.
 *
 * A navigation is a GET or HEAD whose `Accept` names `text/html`, or that says
 * `Sec-Fetch-Mode: navigate`. "Without a session": no cookie, or one the
 * sessions refused (ended, timed out, forged) — the user signs in again. Not
 * when a bearer token or an API key was sent (that client is no browser
 * page), nor for two session cookies (a new sign-in would not remove the
 * tossed one: the user would loop). Forward-auth answers 401 whatever the
 * request (nginx `auth_request` takes nothing else), naming the sign-in in a
 * header for a navigation: its `error_page 401` redirects there
 * (docs/browser-sessions.md).
 */
import type { IncomingMessage } from 'node:http';
import { tokenRefusalOf } from '../../auth/tokens/token-refusals.js';
import { GatewayError, isGatewayError } from '../../errors.js';

/** The sign-in page (`GET /1/sign-in?return_to=…`, DESIGN §1). */
export const SIGN_IN_PATH = '/1/sign-in';

/**
 * Forward-auth's answer names where to sign in instead of redirecting (an
 * ingress's auth request takes no 302): nginx copies it with
 * `auth_request_set` and redirects from its `error_page 401`.
 */
export const SIGN_IN_HEADER = 'x-sign-in-location';

/** Where the refused request was going: its normalised path and raw query. */
export interface Destination {
  readonly path: string;
  readonly query: string;
}

/**
 * The error to answer a refused request to a session route with: for a
 * navigation without a session (see above), the redirect to sign in — or,
 * on forward-auth, the same 401 naming it in {@link SIGN_IN_HEADER} — else
 * `err` itself.
 * @param methods the request's method, or forward-auth's original methods
 * @param presented whether the request sent a bearer token or an API key
 */
export function signInInstead(
  err: unknown,
  req: IncomingMessage,
  destination: Destination,
  methods: string | readonly string[],
  presented: boolean,
  forwardAuth = false,
): unknown {
  if (!isGatewayError(err) || err.code !== 'invalid_token' || presented) return err;
  if (tokenRefusalOf(err) === 'two_cookies' || !isNavigation(req, methods)) return err;
  const { path, query } = destination;
  const location = `${SIGN_IN_PATH}?return_to=${encodeURIComponent(query === '' ? path : `${path}?${query}`)}`;
  const detail = err.detail === undefined ? {} : { detail: err.detail };
  return forwardAuth
    ? new GatewayError('invalid_token', err.message, {
        headers: { ...err.headers, [SIGN_IN_HEADER]: location },
        ...detail,
      })
    : new GatewayError('invalid_token', 'Sign in first.', { redirect: location, ...detail });
}

/** A browser loading a page: GET or HEAD for HTML, or Fetch Metadata's `navigate`. */
export function isNavigation(req: IncomingMessage, methods: string | readonly string[]): boolean {
  const { headers } = req;
  const list = typeof methods === 'string' ? [methods] : methods;
  if (headers.upgrade !== undefined || !list.every((m) => m === 'GET' || m === 'HEAD'))
    return false;
  if (headers['sec-fetch-mode'] === 'navigate') return true;
  const accept = headers.accept;
  return accept !== undefined && accept.toLowerCase().includes('text/html');
}
