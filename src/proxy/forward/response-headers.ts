/**
 * What of an upstream's response head reaches the client: everything but
 * hop-by-hop headers (RFC 9110 §7.6.1) and any header the upstream names in
 * `Connection`. `Transfer-Encoding` goes too: Node frames the client's
 * response itself (chunked, or close-delimited for an HTTP/1.0 client). The
 * `Trailer` announcement goes as well, since trailers are not relayed (and a
 * `Trailer` header on a response Node cannot chunk throws
 * ERR_HTTP_TRAILER_INVALID). Nor does a `Set-Cookie` naming one of the
 * gateway's own cookies (`keepGatewayCookies`).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import vary from 'vary';

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
];
const HOP_BY_HOP_NAMES = new Set(HOP_BY_HOP);

/**
 * `headers` without them: the same object when it has none, else a new one
 * with the rest. Not `delete` on undici's object: deleting a property turns
 * an object into a slow dictionary that Node's `writeHead` then walks
 * (issue 35), and a typical upstream sends two or three of these.
 */
export function dropHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const connection = headers.connection;
  const listed =
    typeof connection === 'string' && connection !== 'keep-alive' && connection !== 'close'
      ? connection.split(',').map((token) => token.trim().toLowerCase())
      : undefined;
  // One pass over the names the upstream sent (a handful), not a property
  // load per hop-by-hop name: each is a generic load on this object (issue 35).
  let any = listed !== undefined;
  for (const name in headers) if (HOP_BY_HOP_NAMES.has(name)) any = true;
  if (!any) return headers;
  const kept: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (!HOP_BY_HOP_NAMES.has(name) && !(listed?.includes(name) ?? false))
      kept[name] = headers[name];
  }
  return kept;
}

/**
 * On a route with `cors` the gateway answers for CORS (it has set its
 * headers on `res`, see `cors.ts`): the upstream's own `Access-Control-*`
 * headers are dropped — they could allow what the route's policy does not —
 * and its `Vary` keeps the gateway's `Origin`, so no cache hands one origin's
 * answer to another. Removes in place from `headers` (the object `dropHopByHop` returned).
 */
export function keepGatewayCors(res: ServerResponse, headers: IncomingHttpHeaders): void {
  const ours = res.getHeader('vary');
  if (ours === undefined && !res.hasHeader('access-control-allow-origin')) return;
  for (const name of Object.keys(headers)) {
    if (name.startsWith('access-control-')) delete headers[name];
  }
  const theirs = headers.vary;
  if (theirs !== undefined && ours !== undefined) headers.vary = vary.append(theirs, String(ours));
}

/**
 * An upstream's `Set-Cookie` naming one of the gateway's own cookies (the
 * session and the sign-in page's pre-session cookie, `reserved`, lower-cased)
 * is dropped, in any letter case: an upstream on the gateway's host could
 * otherwise plant a session of its choosing in the browser (fixation), or a
 * second session cookie that locks the user out. Its other cookies pass.
 * Replaces in place in `headers` (the object `dropHopByHop` returned); costs
 * one property read on a response without `Set-Cookie`.
 */
export function keepGatewayCookies(
  headers: IncomingHttpHeaders,
  reserved: ReadonlySet<string> | undefined,
): void {
  const setCookie = headers['set-cookie'];
  if (setCookie === undefined || reserved === undefined) return;
  const list = typeof setCookie === 'string' ? [setCookie] : setCookie;
  const kept = list.filter((line) => !setsReserved(line, reserved));
  if (kept.length !== list.length) headers['set-cookie'] = kept;
}

/**
 * Whether the `Set-Cookie` line sets a reserved cookie: by its name (up to
 * the first `=`, trimmed, RFC 6265 §5.2), or — nameless (`=__Host-x=v`),
 * which a browser sends back as its value alone — by its value's.
 */
function setsReserved(line: string, reserved: ReadonlySet<string>): boolean {
  const pair = line.split(';', 1)[0] as string;
  const equals = pair.indexOf('=');
  const name = equals < 0 ? '' : pair.slice(0, equals).trim();
  if (name !== '') return reserved.has(name.toLowerCase());
  const value = pair.slice(equals + 1);
  const inner = value.indexOf('=');
  return inner >= 0 && reserved.has(value.slice(0, inner).trim().toLowerCase());
}
