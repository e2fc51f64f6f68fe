/**
 * Path normalisation before route and tenant matching: a request
 * must never reach a route or tenant that its plain form could not. The path
 * we match is the path we forward, so the upstream cannot read it differently.
 *
 * - percent-encoded unreserved characters are decoded (RFC 3986 §6.2.2.2), so
 *   `/%6frders` is `/orders`; other escapes are kept, upper-cased;
 * - encoded slashes and backslashes (`%2f`, `%5c`), raw backslashes, raw
 *   control characters and encoded ones but `%09` are refused: frameworks
 *   disagree on what they mean. `%00` ends the path for C-string code;
 *   `%0D`/`%0A` become line breaks where an upstream writes the decoded path
 *   into a request line or header (nginx's `$uri`); the others are
 *   whitespace to Java's `trim` and not to JavaScript's. `%09`, a tab, is
 *   whitespace to every trim, like `%20`, and kept as sent;
 * - `.` and `..` segments are resolved (RFC 3986 §5.2.4), never above `/`;
 * - a segment that some upstream reads as `.` or `..` but that is not one
 *   (`..;`, `..;x=1`, `%2e%2e%3b`, `..%20`, `.;`) is refused: Tomcat drops
 *   `;params` before resolving dot segments, some matchers trim whitespace,
 *   so the upstream would climb where we did not;
 * - empty segments (`//`) are collapsed;
 * - a raw character outside ASCII is refused (HTTP/1.1's parser never lets
 *   one through; HTTP/2's `:path` and forward-auth's `X-Original-URI` could
 *   carry one): the upstream may decode its bytes, an overlong UTF-8 `.` or
 *   a full-width `／` after NFKC, into a dot segment or a slash we never saw.
 *   Percent-encoded, it is kept as sent.
 *
 * `lenientPath` gives the other reading tenant and route matching must
 * honour: the path as a permissive upstream reads it.
 */
import { GatewayError } from '../../errors.js';

export interface NormalisedTarget {
  /** The normalised path, always starting with `/`. */
  path: string;
  /** The raw query string without `?`, or '' when absent. */
  query: string;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Anything the slow path would change or refuse: escapes, backslashes, `//`, dot segments, controls, non-ASCII. */
const NEEDS_WORK = /[%\\\u0000-\u001f\u007f-\uffff]|\/\/|\/\.(?:\.)?(?:\/|$)|\/\.[.;]/;

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
  if (/[^\u0000-\u007f]/.test(rawPath)) {
    throw new GatewayError(
      'invalid_request',
      'The path has a character outside ASCII: percent-encode it (RFC 3986 §2.1).',
    );
  }
  const decoded = rawPath.replace(/%([0-9A-Fa-f]{2})?/g, (_match, hex: string | undefined) => {
    if (hex === undefined)
      throw new GatewayError('invalid_request', 'The path has a malformed percent-escape.');
    const code = parseInt(hex, 16);
    const char = String.fromCharCode(code);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f || char === '/' || char === '\\') {
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
    if (segment !== '..' && readsAsDotSegment(segment)) {
      throw new GatewayError(
        'invalid_request',
        'The path has a segment that some servers read as "." or "..".',
      );
    }
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  const trailing = /\/\.{0,2}$/.test(decoded) && out.length > 0 ? '/' : '';
  return { path: `/${out.join('/')}${trailing}`, query };
}

/** `;params` as servlet containers drop them, raw or encoded (Spring decodes before it strips). */
const PARAMS = /;|%3B/i;

/** `..;`, `..;x=1`, `..%3B`, `..%20`, `.;`: `.` or `..` once params and whitespace are dropped. */
function readsAsDotSegment(segment: string): boolean {
  const read = stripParams(segment).trim();
  return read === '.' || read === '..';
}

function stripParams(segment: string): string {
  const cut = segment.search(PARAMS);
  return decodeSegment(cut < 0 ? segment : segment.slice(0, cut));
}

/**
 * One segment of a normalised path as a permissive upstream reads it:
 * `;params` dropped (raw or `%3B`), escapes decoded, surrounding whitespace
 * (and `+`, a space to form decoders misapplied to paths) and trailing dots
 * trimmed (IIS and Windows drop them). Letter case is kept: compare with
 * `foldCase`.
 */
export function lenientSegment(segment: string): string {
  if (!/[;%.\s+]/.test(segment)) return segment;
  return stripParams(segment).replace(/^[\s+]+|[\s.+]+$/g, '');
}

/** What `lenientPath` may change: `;`, escapes, `+`, a segment ending in a dot. */
const LENIENT_WORK = /[;%+]|\.(?:\/|$)/;

/**
 * A normalised path as a permissive upstream reads it — each segment through
 * `lenientSegment`, segments left empty dropped — or `undefined` when that
 * reading is the path itself (the common case, one regex test).
 */
export function lenientPath(path: string): string | undefined {
  if (!LENIENT_WORK.test(path)) return undefined;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    const read = lenientSegment(segment);
    if (read !== '') segments.push(read);
  }
  const lenient = `/${segments.join('/')}${path.endsWith('/') && segments.length > 0 ? '/' : ''}`;
  return lenient === path ? undefined : lenient;
}

/**
 * Letter case folded the way case-insensitive matchers do: Express routes,
 * Java's `equalsIgnoreCase` (which also folds `ſ` to `s` and the Kelvin sign
 * to `k`), and full-width letters after NFKC.
 */
export function foldCase(text: string): string {
  if (!/[^\u0000-\u007f]/.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKC')
    .toUpperCase()
    .toLowerCase()
    .replace(/\u0307/g, '');
}

/** Decodes one path segment for comparison with a tenant id (never `/`: refused above). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
