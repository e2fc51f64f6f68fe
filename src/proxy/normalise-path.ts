/**
 * Path normalisation before route and tenant matching (DESIGN §2): a request
 * must never reach a route or tenant that its plain form could not. The path
 * we match is the path we forward, so the upstream cannot read it differently.
 *
 * - percent-encoded unreserved characters are decoded (RFC 3986 §6.2.2.2), so
 *   `/%6frders` is `/orders`; other escapes are kept, upper-cased;
 * - encoded slashes and backslashes (`%2f`, `%5c`), raw backslashes, NUL and
 *   control characters are refused: frameworks disagree on what they mean;
 * - `.` and `..` segments are resolved (RFC 3986 §5.2.4), never above `/`;
 * - empty segments (`//`) are collapsed.
 */
import { GatewayError } from '../errors.js';

export interface NormalisedTarget {
  /** The normalised path, always starting with `/`. */
  path: string;
  /** The raw query string without `?`, or '' when absent. */
  query: string;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Anything the slow path would change or refuse: escapes, backslashes, `//`, dot segments, controls. */
const NEEDS_WORK = /[%\\\u0000-\u001f\u007f]|\/\/|\/\.(?:\.)?(?:\/|$)/;

/** @throws GatewayError `invalid_request` for paths no plain form could have. */
export function normaliseTarget(rawUrl: string | undefined): NormalisedTarget {
  const url = rawUrl ?? '/';
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  if (!rawPath.startsWith('/')) {
    throw new GatewayError('invalid_request', 'The request target must be an absolute path.');
  }
  // The common case, checked once: nothing to decode, resolve or refuse.
  if (!NEEDS_WORK.test(rawPath)) return { path: rawPath, query };
  if (/[\\\u0000-\u001f\u007f]/.test(rawPath)) {
    throw new GatewayError(
      'invalid_request',
      'The path contains a backslash or a control character.',
    );
  }
  const decoded = rawPath.replace(/%([0-9A-Fa-f]{2})?/g, (_match, hex: string | undefined) => {
    if (hex === undefined)
      throw new GatewayError('invalid_request', 'The path has a malformed percent-escape.');
    const code = parseInt(hex, 16);
    const char = String.fromCharCode(code);
    if (code < 0x20 || code === 0x7f || char === '/' || char === '\\') {
      throw new GatewayError(
        'invalid_request',
        'The path contains an encoded slash, backslash or control character.',
      );
    }
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  const out: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  const trailing = /\/\.{0,2}$/.test(decoded) && out.length > 0 ? '/' : '';
  return { path: `/${out.join('/')}${trailing}`, query };
}

/** Decodes one path segment for comparison with a tenant id (never `/`: refused above). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
