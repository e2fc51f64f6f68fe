/**
 * The host a request is addressed to, read once the way every parser would
 * agree on: for tenant host rules (`tenant-match.ts`) and for routes that
 * name their hosts (`route-table.ts`).
 */
import { GatewayError } from '../../errors.js';
import { trimOws } from './optional-whitespace.js';

/** DNS-style labels (letters, digits, `-`, `_`), one optional trailing dot, an optional numeric port. */
const HOST = /^((?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+)\.?(?::\d*)?$/;
const IP_LITERAL = /^\[[0-9A-Fa-f:.]+\](?::\d*)?$/;

/**
 * The lower-case hostname of a Host-like value, without port or trailing
 * dot; `undefined` for an empty one or an IPv6 literal (neither names a
 * tenant or a route's host).
 * @throws GatewayError `invalid_request` for anything parsers could read differently:
 *   a port that is not a number, two ports, userinfo, empty labels, escapes, lists
 */
export function hostnameOf(value: string): string | undefined {
  const host = trimOws(value);
  if (host === '') return undefined;
  if (host.startsWith('[')) {
    if (IP_LITERAL.test(host)) return undefined;
  } else {
    const match = HOST.exec(host);
    if (match !== null) return (match[1] as string).toLowerCase();
  }
  throw new GatewayError('invalid_request', 'A host the request is addressed to is malformed.');
}
