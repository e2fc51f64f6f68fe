/**
 * The CSRF rule of a request a browser session admitted (issue 44). A browser
 * attaches the session cookie to requests other sites make it send (a form
 * posted from anywhere, a WebSocket opened by any page), so the cookie alone
 * does not say the app asked: a request that may change something must also
 * come from the app's own origin (`http/same-origin.ts`: `Sec-Fetch-Site:
 * same-origin`, else `Origin` equal to the request's own; neither: refused).
 *
 * - a safe method (GET, HEAD, OPTIONS, TRACE) passes: it changes nothing;
 * - forward-auth: every original method the ingress names must be safe, or
 *   the rule applies;
 * - a WebSocket upgrade is a GET that opens a two-way channel (cross-site
 *   WebSocket hijacking): it needs a same-origin `Origin` — which every
 *   browser sends on a WebSocket handshake (RFC 6455 §4.1) — and, when sent,
 *   `Sec-Fetch-Site: same-origin`.
 *
 * A bearer token or an API key is not subject to it: a browser never attaches
 * those by itself.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../errors.js';
import { isSafeMethod, isSameOrigin } from '../../http/same-origin.js';

const CSRF_REFUSED = new GatewayError(
  'csrf_refused',
  'A request made with a session cookie that may change something must come from the same origin.',
);

/**
 * @param methods the request's method, or forward-auth's original methods
 * @param own the request's own origin (`request-origin.ts`); undefined: no
 *   `Origin` matches
 * @throws GatewayError `csrf_refused`
 */
export function checkSessionOrigin(
  req: IncomingMessage,
  methods: string | readonly string[],
  own: string | undefined,
): void {
  const { headers } = req;
  if (headers.upgrade !== undefined) {
    if (headers.origin !== own || !isSameOrigin(headers, own)) throw CSRF_REFUSED;
    return;
  }
  const safe = typeof methods === 'string' ? isSafeMethod(methods) : methods.every(isSafeMethod);
  if (!safe && !isSameOrigin(headers, own)) throw CSRF_REFUSED;
}
