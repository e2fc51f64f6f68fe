/**
 * What of an upstream's response head reaches the client: everything but
 * hop-by-hop headers (RFC 9110 §7.6.1) and any header the upstream names in
 * `Connection`. `Transfer-Encoding` goes too: Node frames the client's
 * response itself (chunked, or close-delimited for an HTTP/1.0 client). The
 * `Trailer` announcement goes as well, since trailers are not relayed (and a
 * `Trailer` header on a response Node cannot chunk throws
 * ERR_HTTP_TRAILER_INVALID).
 */
import type { IncomingHttpHeaders } from 'node:http';

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
