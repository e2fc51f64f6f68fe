/**
 * Every answer carries its request's `X-Request-Id`. The gateway's servers
 * make their responses as {@link IdentifiedResponse}, which adds the header
 * when the head is written (`writeHead`, called by Node for an implicit head
 * too) rather than when the request arrives: a response with a header set
 * beforehand takes Node's slow `writeHead`, which copies every header of
 * the upstream's answer through `setHeader` one by one (~5k instructions
 * per proxied request, issue 35). The proxy instead puts the id into the
 * upstream's head itself ({@link takeRequestIdHeader}), and Node writes that
 * head as it is given.
 *
 * A response of another server (a test's, or one made for a refused
 * upgrade) gets the header at once, as before.
 */
import {
  ServerResponse,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';
import { REQUEST_ID_HEADER } from './request-id.js';

export class IdentifiedResponse<
  Request extends IncomingMessage = IncomingMessage,
> extends ServerResponse<Request> {
  /** The id not yet set as a header. */
  requestId: string | undefined = undefined;

  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const id = this.requestId;
    if (id !== undefined) {
      this.requestId = undefined;
      if (!this.hasHeader(REQUEST_ID_HEADER)) this.setHeader(REQUEST_ID_HEADER, id);
    }
    // Node's overloads: (status, headers?) and (status, reason, headers?).
    return typeof reasonOrHeaders === 'string'
      ? super.writeHead(statusCode, reasonOrHeaders, headers)
      : super.writeHead(statusCode, reasonOrHeaders);
  }
}

/** Gives `res` its request id: when its head is written, or now for a response of another kind. */
export function identifyResponse(res: ServerResponse, requestId: string): void {
  if (res instanceof IdentifiedResponse) res.requestId = requestId;
  else res.setHeader(REQUEST_ID_HEADER, requestId);
}

/**
 * For an upstream's head about to be written with `writeHead(status,
 * headers)`: the request id goes into `headers` (unless the upstream sent
 * its own, which it keeps, as `setHeader` would have let it) and not through
 * `setHeader`. Returns `headers`, changed in place.
 */
export function takeRequestIdHeader<Headers extends IncomingHttpHeaders | OutgoingHttpHeaders>(
  res: ServerResponse,
  headers: Headers,
): Headers {
  if (!(res instanceof IdentifiedResponse)) return headers;
  const id = res.requestId;
  if (id === undefined) return headers;
  res.requestId = undefined;
  if (headers[REQUEST_ID_HEADER] === undefined)
    (headers as OutgoingHttpHeaders)[REQUEST_ID_HEADER] = id;
  return headers;
}

/** The request id `res` carries or will carry. */
export function requestIdOf(res: ServerResponse): string | undefined {
  if (res instanceof IdentifiedResponse && res.requestId !== undefined) return res.requestId;
  const given = res.getHeader(REQUEST_ID_HEADER);
  return typeof given === 'string' ? given : undefined;
}
