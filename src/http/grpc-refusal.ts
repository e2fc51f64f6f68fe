/**
 * Refusals in gRPC's shape, beside the JSON ones (`respond.ts` picks): a
 * gRPC client reads no HTTP error body, only the status in the trailers.
 * HTTP 200, `content-type: application/grpc`, and a trailers-only answer —
 * one HEADERS frame that ends the stream — carrying `grpc-status` mapped
 * from the error's HTTP status and `grpc-message` its CODE
 * (percent-encoded as the gRPC HTTP/2 protocol requires). Over HTTP/1.1
 * (a gRPC route reached without HTTP/2) the same fields come as headers.
 */
import type { ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { ErrorResponse } from '../errors.js';

/** gRPC status codes (grpc/doc/statuscodes.md) the gateway answers with. */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const BY_HTTP_STATUS: Readonly<Record<number, number>> = {
  400: GRPC_STATUS.INVALID_ARGUMENT,
  401: GRPC_STATUS.UNAUTHENTICATED,
  403: GRPC_STATUS.PERMISSION_DENIED,
  404: GRPC_STATUS.UNIMPLEMENTED,
  405: GRPC_STATUS.UNIMPLEMENTED,
  408: GRPC_STATUS.DEADLINE_EXCEEDED,
  413: GRPC_STATUS.RESOURCE_EXHAUSTED,
  429: GRPC_STATUS.RESOURCE_EXHAUSTED,
  431: GRPC_STATUS.RESOURCE_EXHAUSTED,
  500: GRPC_STATUS.INTERNAL,
  501: GRPC_STATUS.UNIMPLEMENTED,
  502: GRPC_STATUS.UNAVAILABLE,
  503: GRPC_STATUS.UNAVAILABLE,
  504: GRPC_STATUS.DEADLINE_EXCEEDED,
};

/** DESIGN's mapping: 401 → 16, 403 → 7, 429 → 8, 502/503 → 14, 504 → 4; the rest as gRPC's own guide reads them. */
export function grpcStatusOf(httpStatus: number): number {
  return BY_HTTP_STATUS[httpStatus] ?? GRPC_STATUS.UNKNOWN;
}

/**
 * `grpc-message`'s encoding (gRPC over HTTP/2, "Responses"): every byte
 * outside printable ASCII, and `%` itself, as `%XX` of its UTF-8.
 */
export function encodeGrpcMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Marks a response as a gRPC call's (the request came for a gRPC route). */
const GRPC = Symbol('tenant-gateway.grpc');
type Marked = ServerResponse & { [GRPC]?: boolean; stream?: ServerHttp2Stream; req?: unknown };

export function markGrpc(res: ServerResponse): void {
  (res as Marked)[GRPC] = true;
}

/** A gRPC route's response, or a request that says it is gRPC (`content-type: application/grpc…`). */
export function wantsGrpc(res: ServerResponse): boolean {
  if ((res as Marked)[GRPC] === true) return true;
  const req = (res as Marked).req as { headers?: Record<string, unknown> } | undefined;
  const type = req?.headers?.['content-type'];
  return typeof type === 'string' && /^application\/grpc(?:[+;]|$)/i.test(type);
}

/** The trailers of a refusal: its gRPC status and CODE. */
export function grpcRefusalFields(rendered: ErrorResponse): Record<string, string> {
  return {
    'grpc-status': String(grpcStatusOf(rendered.status)),
    'grpc-message': encodeGrpcMessage(rendered.code),
  };
}

/**
 * Writes the refusal as a trailers-only gRPC answer. The rendered error's
 * own headers (`WWW-Authenticate`, `Retry-After`) ride along as metadata;
 * its body and framing headers do not.
 */
export function sendGrpcRefusal(res: ServerResponse, rendered: ErrorResponse): void {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(rendered.headers)) {
    if (!DROPPED.has(name)) headers[name] = value;
  }
  Object.assign(headers, GRPC_CONTENT, grpcRefusalFields(rendered));
  const stream = (res as Marked).stream;
  if (stream !== undefined && typeof stream.respond === 'function') {
    // One HEADERS frame with END_STREAM: a gRPC client reads it as trailers.
    const id = res.getHeader('x-request-id');
    if (typeof id === 'string') headers['x-request-id'] = id;
    if (!stream.destroyed && !stream.headersSent)
      stream.respond({ ':status': 200, ...headers }, { endStream: true });
    return;
  }
  headers['content-length'] = '0';
  res.writeHead(200, headers).end();
}

const GRPC_CONTENT = { 'content-type': 'application/grpc' };

/** Not metadata: the JSON body's framing and type, and HTTP/1.1 connection management. */
const DROPPED = new Set(['content-type', 'content-length', 'connection', 'cache-control']);
