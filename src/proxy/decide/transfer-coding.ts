/**
 * What a request's `Transfer-Encoding` lets the gateway do with its body.
 * Node has already refused a list that does not end in `chunked` with
 * something it could frame (RFC 9112 §6.3), `Content-Length` beside it, and
 * `chunked` twice in one line; what it lets through is read here as a list
 * (RFC 9110 §5.6.1: empty elements ignored, OWS trimmed, names in any case).
 *
 * - `chunked` alone: Node decodes it, and the forwarder frames the body
 *   again (`header-policy.ts`).
 * - other codings before a final `chunked` (`gzip, chunked`): Node can find
 *   the body's end, but the gateway implements no other coding and its
 *   forwarder cannot pass one on (it frames bodies itself): 501, as RFC 9112
 *   §6.1 asks of a server that does not understand a coding.
 * - anything else that reaches here — a final element that is not exactly
 *   `chunked` (`chunked;x=1`, `xchunked`, `chunked` with a non-breaking space),
 *   or `chunked` also earlier in the list: the body's end cannot be found
 *   the way every recipient would find it, so 400 (RFC 9112 §6.3, §6.1).
 *
 * Both refusals close the connection: what follows on it cannot be framed
 * with confidence.
 */
import { GatewayError } from '../../errors.js';

const CLOSE = { headers: { connection: 'close' } };
const UNFRAMED = new GatewayError(
  'invalid_request',
  'The request has a Transfer-Encoding whose last coding is not exactly chunked, or chunked twice: its body cannot be framed.',
  CLOSE,
);
const NOT_IMPLEMENTED = new GatewayError(
  'not_implemented',
  'The gateway implements no transfer coding but chunked: send the body without the others (Content-Encoding names a compressed body).',
  CLOSE,
);

/**
 * @param encoding the `Transfer-Encoding` as Node gives it (repeated lines joined by `, `)
 * @throws GatewayError `invalid_request` (400) or `not_implemented` (501), both closing the connection
 */
export function checkTransferCoding(encoding: string | undefined): void {
  if (encoding === undefined || encoding.toLowerCase() === 'chunked') return;
  const codings = encoding
    .split(',')
    .map((element) => element.replace(/^[ \t]+|[ \t]+$/g, '').toLowerCase())
    .filter((element) => element !== '');
  const last = codings.pop();
  if (last !== 'chunked') throw UNFRAMED;
  for (const coding of codings) {
    if (coding.split(';', 1)[0]?.replace(/[ \t]+$/, '') === 'chunked') throw UNFRAMED;
  }
  if (codings.length > 0) throw NOT_IMPLEMENTED;
}
