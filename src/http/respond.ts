/**
 * Error answers outside Koa: on a plain response, on a socket whose upgrade
 * was refused (a refused WebSocket gets a real HTTP answer, never a silently
 * dropped socket), and on a socket whose request Node's HTTP parser refused
 * (Node's own answer there is a bare `400 Bad Request` line). All render
 * through `errorResponse`, the one place errors become JSON; a gRPC call's
 * refusal is the same error in gRPC's shape (`grpc-refusal.ts`).
 */
import { STATUS_CODES, ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  errorResponse,
  GatewayError,
  isGatewayError,
  type ErrorCode,
  type ErrorResponse,
} from '../errors.js';
import { sendGrpcRefusal, wantsGrpc } from './grpc-refusal.js';
import type { Refusal, UpgradeScope } from './scope.js';
import { newRequestId, REQUEST_ID_HEADER, takeRequestId } from './request-id.js';
import { requestIdOf } from './response-request-id.js';

/**
 * The error a response was answered with, for its outcome record: set where
 * the answer is written, so no path can answer an error and record another
 * outcome (a 502 counted as accepted, say). `raw` is the status of
 * an answer written on the socket outside the response object.
 */
const ANSWERED = Symbol('tenant-gateway.answered-error');
type AnsweredError = Refusal & { raw?: number };
type Answered = ServerResponse & { [ANSWERED]?: AnsweredError };

export function sendError(res: ServerResponse, err: unknown): void {
  const rendered = errorResponse(err);
  (res as Answered)[ANSWERED] = {
    code: rendered.code,
    detail: isGatewayError(err) ? err.detail : undefined,
  };
  // A gRPC client reads no error body: the status comes in its trailers.
  if (wantsGrpc(res)) return sendGrpcRefusal(res, rendered);
  res.writeHead(rendered.status, rendered.headers).end(rendered.body);
}

/**
 * The CODE (and detail) of the error `res` was answered with, and `raw`, the
 * status of an answer written on its socket instead (the request timed out
 * while handled); undefined when no error was answered.
 */
export function answeredError(res: ServerResponse): AnsweredError | undefined {
  return (res as Answered)[ANSWERED];
}

/**
 * The error answer to an upgrade, on its socket, which then closes; the
 * upgrade's scope records it. Nothing when the client has left.
 */
export function sendUpgradeError(
  req: IncomingMessage,
  socket: Duplex,
  err: unknown,
  scope: UpgradeScope,
): void {
  if (!socket.writable || socket.destroyed) return;
  const res = responseOnSocket(req, socket);
  res.setHeader(REQUEST_ID_HEADER, scope.requestId);
  scope.answered(res);
  sendError(res, err);
}

/** What a client was told when Node's HTTP server refused its request. */
export interface ClientErrorAnswer {
  status: number;
  code: ErrorCode;
  requestId: string;
  /**
   * The request was being handled (its response is recorded with this
   * answer when it closes); false: a request the handler never saw.
   */
  handled: boolean;
}

/** How long a refused connection may stay half-open for the client to read the answer. */
const LINGER_MS = 2000;

/** Sockets already answered: a dead parser reports every further packet again. */
const answeredSockets = new WeakSet<Duplex>();

/**
 * The server's `clientError` handler: the request could not be parsed (bad
 * framing, oversized headers) or did not arrive in time. Answers with the
 * JSON error and `Connection: close`, written raw, since no response object
 * exists; returns what was answered, or nothing when the socket was only
 * closed (the client reset it, or an answer had already begun on it).
 */
export function answerClientError(err: Error, socket: Duplex): ClientErrorAnswer | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  // Node's own rule: bytes written after an answer has begun would corrupt it.
  // `_httpMessage` is the response attached to the socket, if any (Node's
  // default handler reads the same field).
  const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (
    code === 'ECONNRESET' ||
    !socket.writable ||
    answeredSockets.has(socket) ||
    inFlight?.headersSent === true
  ) {
    socket.destroy();
    return undefined;
  }
  answeredSockets.add(socket);
  // A request that was already being handled keeps its id, so the logs match.
  const requestId = (inFlight ? requestIdOf(inFlight) : undefined) ?? newRequestId();
  const error = clientErrorOf(code, (err as { reason?: unknown }).reason);
  const rendered = errorResponse(error);
  // end(), not destroy(): closing with unread input would reset the
  // connection, and the client could lose the answer before reading it.
  socket.end(rawResponse(rendered, requestId));
  (socket as Socket).setTimeout?.(LINGER_MS, () => socket.destroy());
  if (inFlight) (inFlight as Answered)[ANSWERED] = { code: error.code, raw: rendered.status };
  return { status: rendered.status, code: error.code, requestId, handled: !!inFlight };
}

/**
 * The server's `checkExpectation` handler: an `Expect` other than
 * `100-continue` (RFC 9110 §10.1.1) is answered 417 instead of Node's bare one.
 */
export function answerExpectation(req: IncomingMessage, res: ServerResponse): ClientErrorAnswer {
  const requestId = takeRequestId(req);
  const error = new GatewayError(
    'expectation_failed',
    'The only expectation the gateway meets is Expect: 100-continue.',
  );
  res.shouldKeepAlive = false;
  res.setHeader(REQUEST_ID_HEADER, requestId);
  sendError(res, error);
  return { status: error.status, code: error.code, requestId, handled: false };
}

/** Node's codes for what its parser refused (`HPE_*` are llhttp's). */
function clientErrorOf(code: string | undefined, reason: unknown): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError(
        'headers_too_large',
        'The request line and headers are larger than the gateway accepts.',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError(
        'payload_too_large',
        'The chunk extensions are larger than the gateway accepts.',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout', 'The request did not arrive in time.');
    default: {
      const why = typeof reason === 'string' && reason !== '' ? ` (${reason})` : '';
      return new GatewayError('invalid_request', `The request is not valid HTTP/1.1${why}.`);
    }
  }
}

function rawResponse(rendered: ErrorResponse, requestId: string): string {
  let head = `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(rendered.headers)) head += `${name}: ${value}\r\n`;
  head += `${REQUEST_ID_HEADER}: ${requestId}\r\nconnection: close\r\n\r\n`;
  return head + rendered.body;
}

/**
 * An HTTP answer on an upgrade request's raw socket: written once, never
 * kept alive, and the socket ended when the answer is.
 */
export function responseOnSocket(req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new ServerResponse(req);
  res.assignSocket(socket as Socket);
  res.shouldKeepAlive = false;
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  return res;
}
