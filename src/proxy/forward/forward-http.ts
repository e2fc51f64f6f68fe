/**
 * One proxied HTTP exchange on undici's dispatch API (the handler-controller
 * form undici 8 keeps): the request body streams from the client's request
 * into the upstream socket, the response body from undici's parser into the
 * client's response, each side pausing the other when it cannot keep up.
 * Nothing is buffered beyond what the streams hold.
 *
 * The gateway frames the upstream request (no smuggling): the header
 * policy has replaced the client's framing headers with what Node parsed;
 * undici writes `Content-Length` when it is given one, chunked encoding for
 * a body of unknown length, and neither for no body (`Content-Length: 0` for a
 * bodiless POST/PUT/PATCH); it refuses `Transfer-Encoding` in the headers it
 * is given, so no client header can change that.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../../errors.js';
import { sendError } from '../../http/respond.js';
import type { RequestScope, UpstreamCall } from '../../http/scope.js';
import { takeRequestIdHeader } from '../../http/response-request-id.js';
import { dropHopByHop, keepGatewayCookies, keepGatewayCors } from './response-headers.js';
import { clientLeft, errorCode, upstreamError, upstreamTimeout } from './upstream-error.js';
import type { SlotState } from './tenant-slots.js';
import {
  upstreamPath,
  type PooledRequest,
  type UpstreamTarget,
  type UpstreamTls,
} from './upstream-pools.js';

/** Where and how a route forwards. */
export interface ForwardTarget {
  upstream: string;
  timeoutMs: number;
  /** The longest silence within the upstream's response body (undici's `bodyTimeout`); 0: none. */
  bodyIdleTimeoutMs: number;
  /** The route's TLS to an https upstream; undefined: Node's defaults. */
  tls?: UpstreamTls | undefined;
  /** The gateway's own cookies (lower-cased names): an upstream never sets one (`response-headers.ts`). */
  reservedCookies?: ReadonlySet<string> | undefined;
}

/** The exchange rides on the request and response: shared listeners find it without a closure. */
const EXCHANGE = Symbol('tenant-gateway.exchange');
type Carrying = { [EXCHANGE]?: HttpExchange };
/** The last exchange of a client connection. */
const LAST = Symbol('tenant-gateway.last-exchange');
type ClientSocket = Socket & { [LAST]?: HttpExchange | undefined };

/** The slot bucket of requests without a tenant (public routes): a tenant id is never empty. */
const NO_TENANT = '';

const TENANT_BUSY = new GatewayError(
  'too_many_requests',
  'This tenant has as many requests in flight to this upstream as it may; retry shortly.',
  // A slot frees as soon as one of the tenant's own requests ends.
  { headers: { 'retry-after': '1' } },
);

/**
 * Forwards `req` (its headers already rewritten, framing included, its URL
 * normalised) to `target`; answers `res`. The route's timeout starts now: it
 * covers waiting for a connection slot, then runs until the upstream's
 * response head arrives, pushed back by every request-body chunk, so a long
 * upload that keeps moving is never cut. A tenant past its share of the
 * origin's connections is refused with 429.
 */
export function forwardHttp(
  req: IncomingMessage,
  res: ServerResponse,
  target: UpstreamTarget,
  route: ForwardTarget,
  scope: RequestScope,
): void {
  const exchange = new HttpExchange(req, res, scope, target, route, scope.tenantId ?? NO_TENANT);
  exchange.timer = setTimeout(expire, route.timeoutMs, exchange);
  (res as ServerResponse & Carrying)[EXCHANGE] = exchange;
  res.on('close', responseClosed);
  // An HTTP/2 connection's streams are independent: none waits for another.
  if (req.httpVersionMajor >= 2) return admit(exchange);
  // Requests a client pipelines on one connection go upstream one after the
  // other, as it sent them: its answers must come back in that order anyway.
  const socket = exchange.socket;
  const previous = socket[LAST];
  socket[LAST] = exchange;
  if (previous !== undefined && !previous.closed) previous.next = exchange;
  else admit(exchange);
}

/**
 * Gives up on the exchange answering `res`, if any: its upstream request is
 * aborted (the upstream sees a broken request, never a truncated one as
 * whole). For an answer the gateway gives instead (a stalled request body).
 */
export function abandonExchange(res: ServerResponse): void {
  (res as ServerResponse & Carrying)[EXCHANGE]?.cancel(clientLeft());
}

/** Asks for a slot of the origin: sent now, when one frees, or refused (429). */
function admit(exchange: HttpExchange): void {
  if (exchange.cancelled !== undefined) return;
  const admitted = exchange.target.slots.acquire(exchange);
  if (admitted === 'refused') {
    exchange.stopTimer();
    // Answered here: nothing of it may reach the upstream.
    exchange.cancelled = TENANT_BUSY;
    sendError(exchange.res, TENANT_BUSY);
    return;
  }
  if (admitted === 'held') exchange.send();
}

class HttpExchange implements Dispatcher.DispatchHandler, PooledRequest {
  slot: SlotState = 'none';
  timer: NodeJS.Timeout | undefined = undefined;
  controller: Dispatcher.DispatchController | undefined = undefined;
  /** Why the gateway gave up on this exchange; set once. */
  cancelled: Error | undefined = undefined;
  /** When the request went to undici; undefined while it waits for a slot. */
  sentAt: number | undefined = undefined;
  hasBody = false;
  /** The upstream call's span, when the request is traced. */
  call: UpstreamCall | undefined = undefined;
  /** The client's response has closed. */
  closed = false;
  /** The request the client pipelined after this one, waiting for this one to end. */
  next: HttpExchange | undefined = undefined;
  /** The client's connection (undici takes `req.socket` away once it has read the body). */
  readonly socket: ClientSocket;
  #pausedOnClient = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly scope: RequestScope,
    readonly target: UpstreamTarget,
    readonly route: ForwardTarget,
    readonly tenant: string,
  ) {
    this.socket = req.socket as ClientSocket;
  }

  get upstream(): string {
    return this.route.upstream;
  }

  /** Holds a slot: the request goes to undici, which sends it on a free connection. */
  send(): void {
    this.sentAt = performance.now();
    const req = this.req;
    const headers = req.headers;
    let body: IncomingMessage | AsyncIterable<Buffer> | null = null;
    if (headers['transfer-encoding'] !== undefined) {
      // The header policy's `chunked`: undici chunks a body of unknown length
      // itself and refuses the header (an undefined header is skipped, and
      // costs no `delete`). Given the stream, undici would send a body that
      // has already ended in full with a Content-Length: an iterable keeps it
      // chunked, as the client framed it.
      headers['transfer-encoding'] = undefined;
      body = chunksOf(req, this);
    } else if (headers['content-length'] !== undefined && headers['content-length'] !== '0') {
      body = req;
      this.hasBody = true;
    }
    const trace = this.scope.trace;
    if (trace !== undefined)
      this.call = trace.upstreamCall(req.method ?? 'GET', this.upstream, headers);
    this.target.pool.dispatch(
      {
        path: upstreamPath(this.target, req.url ?? '/'),
        method: req.method ?? 'GET',
        headers,
        // The head is the route timer's (it also covers the wait for a slot).
        headersTimeout: 0,
        bodyTimeout: this.route.bodyIdleTimeoutMs,
        // undici takes async iterables (docs/api/Dispatcher.md); its types omit them.
        body: body as Dispatcher.DispatchOptions['body'],
      },
      this,
    );
  }

  /** Called by undici on the connection it chose, right before it writes the request. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.cancelled !== undefined) {
      controller.abort(this.cancelled);
      return;
    }
    this.controller = controller;
    if (this.hasBody) {
      // Attached here, not earlier: undici attaches its own reader in the
      // same tick, so no chunk flows before someone forwards it.
      (this.req as IncomingMessage & Carrying)[EXCHANGE] = this;
      this.req.on('data', bodyMoved);
    }
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    // 1xx interim answers (103 Early Hints) stop here; undici refuses a 100
    // it did not ask for.
    if (statusCode < 200) return;
    this.stopTimer();
    if (this.cancelled !== undefined) {
      controller.abort(this.cancelled);
      return;
    }
    this.recordUpstreamTime();
    this.scope.upstreamStatus = statusCode;
    this.call?.answered(statusCode);
    const forwarded = takeRequestIdHeader(this.res, dropHopByHop(headers));
    keepGatewayCors(this.res, forwarded);
    keepGatewayCookies(forwarded, this.route.reservedCookies);
    if (statusMessage) this.res.writeHead(statusCode, statusMessage, forwarded);
    else this.res.writeHead(statusCode, forwarded);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.res.write(chunk)) return;
    controller.pause();
    if (!this.#pausedOnClient) {
      this.#pausedOnClient = true;
      this.res.on('drain', responseDrained);
    }
  }

  onResponseEnd(): void {
    this.endCall();
    this.res.end();
  }

  /** Undici's error, or the reason the gateway aborted with; `controller` is absent before a connection. */
  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.stopTimer();
    this.endCall(err);
    if (this.cancelled !== undefined) return; // answered (504) or nobody to answer
    const res = this.res;
    const log = this.scope.log;
    if (res.headersSent) {
      // The answer has begun: all we can do is cut it, so the client sees a broken response.
      this.scope.upstreamBroke = true;
      log.warn({ code: errorCode(err) }, 'upstream broke mid-response');
      res.destroy();
      return;
    }
    this.recordUpstreamTime();
    const error = upstreamError(err);
    log.warn({ code: errorCode(err), upstream: this.upstream }, error.message);
    sendError(res, error);
  }

  /** Ends the upstream call's span, once. */
  endCall(error?: unknown): void {
    if (this.call === undefined) return;
    this.call.end(error);
    this.call = undefined;
  }

  /** Time from sending to the upstream's answer or failure, once per exchange. */
  recordUpstreamTime(): void {
    if (this.sentAt === undefined || this.scope.upstreamMs !== undefined) return;
    this.scope.upstreamMs = performance.now() - this.sentAt;
  }

  stopTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Gives up on the upstream: now if undici has started the request, else when it does. */
  cancel(reason: Error): void {
    if (this.cancelled !== undefined) return;
    this.cancelled = reason;
    this.stopTimer();
    this.controller?.abort(reason);
  }
}

/** The route's timeout ran out before the response head: 504, and the upstream request goes. */
function expire(exchange: HttpExchange): void {
  exchange.timer = undefined;
  if (exchange.cancelled !== undefined || exchange.res.headersSent) return;
  if (exchange.slot === 'waiting') {
    // Still in line for a connection: no upstream request exists, the gateway answers.
    exchange.target.slots.leave(exchange);
    exchange.cancelled = upstreamTimeout();
    exchange.scope.log.warn(
      { upstream: exchange.upstream },
      'no upstream connection came free within the route timeout',
    );
    sendError(exchange.res, upstreamError(exchange.cancelled));
    return;
  }
  exchange.recordUpstreamTime();
  exchange.cancel(upstreamTimeout());
  const error = upstreamError(exchange.cancelled);
  exchange.scope.log.warn(
    { code: errorCode(exchange.cancelled), upstream: exchange.upstream },
    error.message,
  );
  sendError(exchange.res, error);
}

/** A chunked request body, each chunk pushing the route's timeout back; undici pulls them (back-pressure). */
async function* chunksOf(req: IncomingMessage, exchange: HttpExchange): AsyncIterable<Buffer> {
  for await (const chunk of req) {
    exchange.timer?.refresh();
    exchange.scope.bytesIn = (exchange.scope.bytesIn ?? 0) + (chunk as Buffer).length;
    yield chunk as Buffer;
  }
}

/** A request-body chunk arrived: the request is not idle. */
function bodyMoved(this: IncomingMessage & Carrying, chunk: Buffer): void {
  const exchange = this[EXCHANGE];
  if (exchange === undefined) return;
  exchange.timer?.refresh();
  exchange.scope.bytesIn = (exchange.scope.bytesIn ?? 0) + chunk.length;
}

function responseDrained(this: ServerResponse & Carrying): void {
  this[EXCHANGE]?.controller?.resume();
}

/**
 * The client's response closed (answered or abandoned): the slot or the place
 * in line goes; if it did not finish, the client left and the upstream request goes.
 */
function responseClosed(this: ServerResponse & Carrying): void {
  const exchange = this[EXCHANGE];
  if (exchange === undefined) return;
  exchange.stopTimer();
  exchange.closed = true;
  exchange.target.slots.leave(exchange);
  if (!this.writableFinished) exchange.cancel(clientLeft());
  const { socket, next } = exchange;
  if (socket[LAST] === exchange) socket[LAST] = undefined;
  if (next !== undefined) {
    exchange.next = undefined;
    admit(next);
  }
}
