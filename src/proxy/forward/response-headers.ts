/**
 * What of an upstream's response head reaches the client: everything but
 * hop-by-hop headers (RFC 9110 §7.6.1) and any header the upstream names in
 * `Connection`. `Transfer-Encoding` goes too: Node frames the client's
 * response itself (chunked, or close-delimited for an HTTP/1.0 client). The
 * `Trailer` announcement goes as well, since trailers are not relayed (and a
 * `Trailer` header on a response Node cannot chunk throws
 * ERR_HTTP_TRAILER_INVALID).
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

/**
 * Removes them in place from `headers`, an object undici made for this
 * response alone. Deletes only what is there: a typical upstream sends two
 * or three of these.
 */
export function dropHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const connection = headers.connection;
  if (typeof connection === 'string' && connection !== 'keep-alive' && connection !== 'close') {
    for (const token of connection.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '' && headers[name] !== undefined) delete headers[name];
    }
  }
  for (const name of HOP_BY_HOP) if (headers[name] !== undefined) delete headers[name];
  return headers;
}

/**
 * On a route with `cors` the gateway answers for CORS (it has set its
 * headers on `res`, see `cors.ts`): the upstream's own `Access-Control-*`
 * headers are dropped — they could allow what the route's policy does not —
 * and its `Vary` keeps the gateway's `Origin`, so no cache hands one origin's
 * answer to another. Removes in place from `headers`, like `dropHopByHop`.
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
