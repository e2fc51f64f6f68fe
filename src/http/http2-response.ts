/**
 * The gateway's HTTP/2 response (Node's compatibility API,
 * `Http2ServerResponse`): the code that answers HTTP/1.1 answers HTTP/2 with
 * it unchanged. Connection-specific fields (`Connection: close` on a
 * refusal, `Keep-Alive` of an upstream) have no meaning in HTTP/2 and are
 * not allowed in it (RFC 9113 §8.2.2): they are dropped here, quietly, and
 * so is an upstream's reason phrase (HTTP/2 has none, §8.3.2).
 */
import { Http2ServerResponse } from 'node:http2';
import type { OutgoingHttpHeaders } from 'node:http';
import { CONNECTION_SPECIFIC } from './http2-request.js';

export class GatewayHttp2Response extends Http2ServerResponse {
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

function withoutConnectionFields(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  let any = false;
  for (const name in headers) if (CONNECTION_SPECIFIC.has(name.toLowerCase())) any = true;
  if (!any) return headers;
  const kept: OutgoingHttpHeaders = {};
  for (const name in headers)
    if (!CONNECTION_SPECIFIC.has(name.toLowerCase())) kept[name] = headers[name];
  return kept;
}

// What the dispatcher asks of a response before it forwards (`res.destroyed`):
// the compatibility API has no such property; its stream has.
Object.defineProperty(GatewayHttp2Response.prototype, 'destroyed', {
  get(this: GatewayHttp2Response) {
    return this.stream.destroyed;
  },
  configurable: true,
});
