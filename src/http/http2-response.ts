/**
 * The gateway's HTTP/2 response (Node's compatibility API,
 * `Http2ServerResponse`): the code that answers HTTP/1.1 answers HTTP/2 with
 * it unchanged. Connection-specific fields (`Connection: close` on a
 * refusal, `Keep-Alive` of an upstream) have no meaning in HTTP/2 and are
 * not allowed in it (RFC 9113 §8.2.2): they are dropped here, quietly, and
 * so is an upstream's reason phrase (HTTP/2 has none, §8.3.2).
 */
import { Http2ServerResponse } from 'node:http2';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { CONNECTION_SPECIFIC } from './http2-request.js';

export class GatewayHttp2Response extends Http2ServerResponse {
  /** The answer's body bytes written so far (the access log's `bytesOut`). */
  bodyBytes = 0;

  // Three parameters passed on as they came (the compatibility API's own
  // `(chunk, encoding, cb)`, which reads an absent one as undefined): no rest
  // array and spread call on every write of every answer.
  override write(chunk: string | Uint8Array, encoding?: unknown, cb?: unknown): boolean {
    this.bodyBytes += byteLength(chunk);
    return (super.write as (...args: unknown[]) => boolean)(chunk, encoding, cb);
  }

  override end(chunk?: unknown, encoding?: unknown, cb?: unknown): this {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array)
      this.bodyBytes += byteLength(chunk);
    return (super.end as (...args: unknown[]) => this)(chunk, encoding, cb);
  }

  override setHeader(name: string, value: number | string | readonly string[]): void {
    if (CONNECTION_SPECIFIC.has(name.toLowerCase())) return;
    super.setHeader(name, value);
  }

  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders,
    headers?: OutgoingHttpHeaders,
  ): this {
    const given = typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders;
    return super.writeHead(
      statusCode,
      given === undefined ? undefined : withoutConnectionFields(given),
    );
  }
}

function byteLength(chunk: string | Uint8Array): number {
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
}

function withoutConnectionFields(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let any = false;
  for (const name in headers) if (CONNECTION_SPECIFIC.has(name.toLowerCase())) any = true;
  if (!any) return headers;
  const kept: OutgoingHttpHeaders = {};
  for (const name in headers)
    if (!CONNECTION_SPECIFIC.has(name.toLowerCase())) kept[name] = headers[name];
  return kept;
}

// What the dispatcher and the recorder ask of a response, as of an
// HTTP/1.1 one: `destroyed` (the compatibility API has none; its stream
// has), and `writableFinished` only for an answer sent whole — a stream the
// client reset is a client that left (499 client_closed), never a 200.
Object.defineProperty(GatewayHttp2Response.prototype, 'destroyed', {
  get(this: GatewayHttp2Response) {
    return this.stream.destroyed;
  },
  configurable: true,
});
Object.defineProperty(GatewayHttp2Response.prototype, 'writableFinished', {
  get(this: GatewayHttp2Response) {
    const stream = this.stream;
    return stream.writableFinished && !stream.aborted && (stream.rstCode ?? 0) === 0;
  },
  configurable: true,
});

/**
 * What the request recorder reads of a connection, for one HTTP/2 stream:
 * the client's address, kept from the start (the compatibility API's
 * socket is gone once the stream closes), and the bytes of this stream's
 * answer body (the connection's count mixes every stream's, and HPACK
 * makes a head's size no one stream's).
 */
export function streamCounters(res: ServerResponse, remoteAddress: string | undefined) {
  const counted = res as unknown as GatewayHttp2Response;
  return {
    remoteAddress,
    get bytesWritten(): number {
      return counted.bodyBytes;
    },
  };
}
