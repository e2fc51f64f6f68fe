/**
 * An HTTP/2 request, as Node's compatibility API gives it
 * (`Http2ServerRequest`), made to read like an HTTP/1.1 one for the one
 * dispatcher (`dispatch.ts`): the same admission, tenant rules and
 * forwarding for every entry way. `:authority` becomes `Host` (RFC 9113
 * §8.3.1), the pseudo-header fields leave `headers` and `rawHeaders`, and
 * cookies split into several fields are one `Cookie` joined with `; `
 * (§8.2.3), as an HTTP/1.1 upstream expects.
 *
 * Node's HTTP/2 layer (nghttp2) has already refused, with RST_STREAM
 * PROTOCOL_ERROR, what §8.2 calls malformed: connection-specific fields
 * (`Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`,
 * `Upgrade`), `TE` other than `trailers`, upper-case names, a pseudo-header
 * field after a regular one or twice, and a `Content-Length` the DATA frames
 * do not add up to (§8.1.1). A field with CR, LF or NUL in its value it
 * drops, silently (nghttp2 without an invalid-header callback): it never
 * reaches here, nor an upstream (test/http/http2-malformed.test.ts).
 *
 * What nghttp2 lets through but HTTP/1.1's parser never does is refused here
 * (400, as HTTP/1.1 answers it): a method other than those Node's HTTP/1.1
 * parser knows, in their case (`post` is not `POST`: scopes are keyed by
 * method, and Django or Flask upper-case what they are sent), and a `:path`
 * with a byte outside printable ASCII (path normalisation reads ASCII; an
 * upstream may decode the rest, overlong UTF-8 included, into `/` or `.`).
 * The two entry ways accept the same requests.
 */
import { Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Stream } from 'node:http2';
import type { ReadableOptions } from 'node:stream';
import {
  METHODS,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { GatewayError } from '../errors.js';

/** The HTTP/1.1 cap on a request's header section, applied to HTTP/2's header list too. */
export const HEADER_LIST_BYTES = 16 * 1024;

/** Fields an HTTP/1.1 message may carry that HTTP/2 forbids (RFC 9113 §8.2.2): never sent on an HTTP/2 response. */
export const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

const NO_AUTHORITY = new GatewayError(
  'invalid_request',
  'The request names no :authority (nor Host).',
);
const TWO_AUTHORITIES = new GatewayError(
  'invalid_request',
  'The request names one host in :authority and another in Host (RFC 9113 §8.3.1).',
);
const CONNECT = new GatewayError(
  'not_implemented',
  'CONNECT is not served: the gateway is no tunnel, and WebSockets over HTTP/2 (RFC 8441) are not offered; use HTTP/1.1 for WebSockets.',
);
/** The methods Node's HTTP/1.1 parser accepts, as it spells them (RFC 9110 §9.1: case-sensitive). */
const HTTP1_METHODS = new Set(METHODS);
const UNKNOWN_METHOD = new GatewayError(
  'invalid_request',
  'The request method is not one HTTP/1.1 carries here (methods are case-sensitive: POST, not post).',
);
/** A byte HTTP/1.1's request target cannot hold (nghttp2 already refused controls and spaces). */
const NOT_IN_TARGET = /[^\x21-\x7e]/;
const TARGET_BYTES = new GatewayError(
  'invalid_request',
  'The request target has a byte outside printable ASCII: percent-encode it (RFC 3986 §2.1).',
);
const HEADERS_TOO_LARGE = new GatewayError(
  'headers_too_large',
  'The request header list is larger than the gateway accepts.',
);

/** Why a translated request cannot be served; the dispatcher answers it (`http2RefusalOf`). */
const REFUSAL = Symbol('tenant-gateway.http2-refusal');
type Refusable = { [REFUSAL]?: GatewayError };

/** The request and response as the dispatcher takes them. */
export type Translated = { req: IncomingMessage; res: ServerResponse };

/**
 * The main listener's HTTP/2 request (`http2ServerOptions`): own data
 * properties, made with the object, where the compatibility API has getters
 * (`method`, `url`, `headers` and `rawHeaders` read the header list as
 * received, pseudo-header fields included). They hold what those getters
 * would answer until {@link translateHttp2Request} fills them by assignment,
 * instead of four `Object.defineProperty` calls a request (~10k
 * instructions of a gRPC call, `npm run bench:grpc`).
 */
export class GatewayHttp2Request extends Http2ServerRequest {
  override method: string;
  override url: string;
  override headers: IncomingHttpHeaders;
  override rawHeaders: string[];

  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    options: ReadableOptions,
    rawHeaders: readonly string[],
  ) {
    super(stream, headers, options, rawHeaders);
    this.method = headers[':method'] as string;
    this.url = headers[':path'] as string;
    this.headers = headers;
    this.rawHeaders = rawHeaders as string[];
  }
}

/** Why an HTTP/2 request cannot be served (set by `translateHttp2Request`); undefined: it can. */
export function http2RefusalOf(req: IncomingMessage): GatewayError | undefined {
  return (req as Refusable)[REFUSAL];
}

/**
 * Gives `req` HTTP/1.1's shape in place (own `url`, `method`, `headers` and
 * `rawHeaders`, shadowing the compatibility API's getters, which read the
 * pseudo-header fields), keeping why it cannot be served, if so.
 */
export function translateHttp2Request(
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): Translated {
  const given = req.headers;
  const method = given[':method'] ?? 'GET';
  const url = given[':path'] ?? '';
  const authority = given[':authority'];
  const host = given.host;
  const headers: IncomingHttpHeaders = {};
  for (const name in given) if (name.charCodeAt(0) !== 0x3a) headers[name] = given[name];
  const givenRaw = req.rawHeaders;
  const rawHeaders = rawHeadersOf(givenRaw, authority ?? host);
  if (authority !== undefined) headers.host = authority;
  // HTTP/2 frames a body by its DATA frames, and most clients send no
  // Content-Length: one is coming unless END_STREAM closed the HEADERS. To
  // the pipeline it is then a body of unknown length, as a chunked one is.
  if (headers['content-length'] === undefined && !req.stream.endAfterHeaders) {
    headers['transfer-encoding'] = 'chunked';
    rawHeaders.push('transfer-encoding', 'chunked');
  }
  if (req instanceof GatewayHttp2Request) {
    req.method = method;
    req.url = url;
    req.headers = headers;
    req.rawHeaders = rawHeaders;
  } else {
    own(req, 'method', method);
    own(req, 'url', url);
    own(req, 'headers', headers);
    own(req, 'rawHeaders', rawHeaders);
  }
  const refusal = refusalOf(givenRaw, method, url, authority, host);
  if (refusal !== undefined) (req as Refusable)[REFUSAL] = refusal;
  // Node's compatibility API reads as the HTTP/1.1 classes do for all the dispatcher uses (docs/http2.md).
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse };
}

function refusalOf(
  raw: readonly string[],
  method: string,
  url: string,
  authority: string | undefined,
  host: string | undefined,
): GatewayError | undefined {
  if (overListCap(raw)) return HEADERS_TOO_LARGE;
  if (method === 'CONNECT') return CONNECT;
  if (!HTTP1_METHODS.has(method)) return UNKNOWN_METHOD;
  if (NOT_IN_TARGET.test(url)) return TARGET_BYTES;
  if (authority === undefined && host === undefined) return NO_AUTHORITY;
  if (authority !== undefined && host !== undefined && host !== authority) return TWO_AUTHORITIES;
  return undefined;
}

/**
 * Whether the header list is larger than {@link HEADER_LIST_BYTES} as
 * SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 §6.5.2): name, value
 * and 32 per field. Counted in UTF-8 only when it may matter: a UTF-16 code
 * unit is at most 3 bytes of UTF-8, so a list whose units, tripled, stay
 * within the cap is within it (nearly every list).
 */
function overListCap(raw: readonly string[]): boolean {
  let units = 0;
  for (let i = 0; i < raw.length; i += 2)
    units += (raw[i] as string).length + (raw[i + 1] as string).length;
  // 32 per field: 16 per entry of `raw`, which holds a name and a value per field.
  if (3 * units + 16 * raw.length <= HEADER_LIST_BYTES) return false;
  let bytes = 0;
  for (let i = 0; i < raw.length; i += 2)
    bytes += Buffer.byteLength(raw[i] as string) + Buffer.byteLength(raw[i + 1] as string) + 32;
  return bytes > HEADER_LIST_BYTES;
}

/** `Host` first, then every regular field as sent, cookies joined into one (RFC 9113 §8.2.3). */
function rawHeadersOf(raw: readonly string[], host: string | undefined): string[] {
  const out: string[] = host === undefined ? [] : ['host', host];
  const cookies: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.charCodeAt(0) === 0x3a || name === 'host') continue;
    if (name === 'cookie') cookies.push(raw[i + 1] as string);
    else out.push(name, raw[i + 1] as string);
  }
  if (cookies.length > 0) out.push('cookie', cookies.join('; '));
  return out;
}

function own(target: object, name: string, value: unknown): void {
  Object.defineProperty(target, name, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}
