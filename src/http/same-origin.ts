/**
 * Whether a browser request comes from the origin it is addressed to: the
 * CSRF rule of every request a session cookie authenticates (the proxy's
 * `auth: session` routes, the sign-in page, the sessions API). A browser
 * says where a request comes from with Fetch Metadata (`Sec-Fetch-Site`, sent
 * by every current browser) or, before it, `Origin` (sent on every unsafe
 * request). The rule fails closed: a request with neither is not same-origin.
 *
 * - `Sec-Fetch-Site` present: only `same-origin` passes (`same-site` is a
 *   sibling host, which may be another tenant's app; `none` a typed URL or a
 *   bookmark, never a form post).
 * - else `Origin` present: it must equal the request's own origin
 *   ({@link ownOrigin}); `null` (a sandboxed frame, a redirect across
 *   origins) never does.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Methods that change nothing (RFC 9110 §9.2.1): no CSRF rule for them. */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function isSafeMethod(method: string | undefined): boolean {
  return SAFE.has(method ?? 'GET');
}

/**
 * `scheme://host[:port]` as a browser writes an `Origin` (lower case, the
 * default port left out), of a request addressed to `host` over `scheme`;
 * undefined when `host` is not one a URL holds.
 */
export function ownOrigin(scheme: 'http' | 'https', host: string | undefined): string | undefined {
  if (host === undefined || host === '' || /[/\\?#@\s]/.test(host)) return undefined;
  try {
    return new URL(`${scheme}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** @param own the request's own origin ({@link ownOrigin}); undefined: nothing matches */
export function isSameOrigin(headers: IncomingHttpHeaders, own: string | undefined): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  const origin = headers.origin;
  return origin !== undefined && own !== undefined && origin !== 'null' && origin === own;
}
