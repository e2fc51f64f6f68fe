/**
 * WebSocket upgrades on the same pools as HTTP: node:http hands the gateway
 * the client's socket (`upgrade` event), undici sends the upgrade request on
 * a connection of the origin's pool and hands back that connection on `101`;
 * the gateway relays the `101` head and pipes the two sockets into each
 * other. Any other answer is relayed as an HTTP response on the client's
 * socket, which then closes. One connection layer for both kinds of traffic:
 * the same per-origin connect options (TLS) apply to both.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { responseOnSocket, sendUpgradeError } from '../../http/respond.js';
import type { UpgradeScope } from '../../http/scope.js';
import type { ForwardTarget } from './forward-http.js';
import { dropHopByHop, keepGatewayCookies } from './response-headers.js';
import { clientLeft, errorCode, upstreamError, upstreamTimeout } from './upstream-error.js';
import { upstreamPath, type UpstreamTarget } from './upstream-pools.js';

export interface UpgradeRequest {
  req: IncomingMessage;
  /** The client's socket, from the server's `upgrade` event. */
  socket: Duplex;
  /** Bytes the client sent after the upgrade request's head. */
  head: Buffer;
  /** Told how the exchange ended (the `101`, or the answer on the socket); its log and request id. */
  scope: UpgradeScope;
}

/**
 * Forwards an admitted WebSocket upgrade; `opened` is told once the
 * upstream accepted it and both sockets are joined.
 */
export function forwardUpgrade(
  request: UpgradeRequest,
  target: UpstreamTarget,
  route: ForwardTarget,
  opened: (upstreamSocket: Duplex) => void,
): void {
  const { req, socket } = request;
  const headers = req.headers;
  // undici writes `Connection: upgrade` and `Upgrade` itself, and frames the
  // request (an upgrade request has no body).
  headers.connection = undefined;
  headers.upgrade = undefined;
  headers['transfer-encoding'] = undefined;
  headers['content-length'] = undefined;
  const exchange = new UpgradeExchange(request, route, opened);
  exchange.timer = setTimeout(expire, route.timeoutMs, exchange);
  socket.once('close', () => exchange.cancel(clientLeft()));
  target.pool.dispatch(
    { path: upstreamPath(target, req.url ?? '/'), method: 'GET', headers, upgrade: 'websocket' },
    exchange,
  );
}

class UpgradeExchange implements Dispatcher.DispatchHandler {
  timer: NodeJS.Timeout | undefined = undefined;
  controller: Dispatcher.DispatchController | undefined = undefined;
  cancelled: Error | undefined = undefined;
  /** The upstream answered without upgrading: its answer, relayed to the client. */
  response: ServerResponse | undefined = undefined;

  constructor(
    readonly request: UpgradeRequest,
    readonly route: ForwardTarget,
    readonly opened: (upstreamSocket: Duplex) => void,
  ) {}

  get upstream(): string {
    return this.route.upstream;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.cancelled !== undefined) controller.abort(this.cancelled);
    else this.controller = controller;
  }

  onRequestUpgrade(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    upstreamSocket: Duplex,
  ): void {
    this.stopTimer();
    const { socket, head } = this.request;
    upstreamSocket.on('error', () => upstreamSocket.destroy());
    if (this.cancelled !== undefined || socket.destroyed) {
      upstreamSocket.destroy();
      return;
    }
    // From here the client's socket carries WebSocket frames: a failure on
    // either side closes both, never an HTTP answer.
    this.cancelled = clientLeft();
    this.opened(upstreamSocket);
    keepGatewayCookies(headers, this.route.reservedCookies);
    // Header values are latin1 strings (undici decodes them so): written back byte for byte.
    socket.write(responseHead(statusCode, 'Switching Protocols', headers), 'latin1');
    this.request.scope.switched();
    if (head.length > 0) upstreamSocket.write(head);
    // A clean close ends the client's side after what is in flight (the pipe
    // ends it too); a broken one cuts it, so the client sees 1006.
    upstreamSocket.once('close', (hadError: boolean) => {
      if (hadError) socket.destroy();
      else socket.end();
    });
    socket.once('close', () => upstreamSocket.destroy());
    upstreamSocket.pipe(socket);
    socket.pipe(upstreamSocket);
  }

  /** Not a `101`: the upstream's answer goes to the client as it is, then the socket closes. */
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return;
    this.stopTimer();
    const { req, socket } = this.request;
    if (this.cancelled !== undefined || socket.destroyed) {
      controller.abort(this.cancelled ?? clientLeft());
      return;
    }
    const res = responseOnSocket(req, socket);
    res.on('drain', () => controller.resume());
    this.response = res;
    this.request.scope.answered(res);
    const forwarded = dropHopByHop(headers);
    keepGatewayCookies(forwarded, this.route.reservedCookies);
    if (statusMessage) res.writeHead(statusCode, statusMessage, forwarded);
    else res.writeHead(statusCode, forwarded);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.response?.write(chunk) === false) controller.pause();
  }

  onResponseEnd(): void {
    this.response?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.stopTimer();
    if (this.cancelled !== undefined) return;
    const { req, socket, scope } = this.request;
    if (this.response !== undefined) {
      scope.log.warn({ code: errorCode(err), upstream: this.upstream }, 'websocket upstream broke');
      socket.destroy();
      return;
    }
    scope.log.warn({ code: errorCode(err), upstream: this.upstream }, 'websocket upstream failed');
    sendUpgradeError(req, socket, upstreamError(err), scope);
  }

  stopTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  cancel(reason: Error): void {
    this.stopTimer();
    if (this.cancelled !== undefined) return;
    this.cancelled = reason;
    this.controller?.abort(reason);
  }
}

/** No `101` nor answer within the route's timeout: 504, and the upstream request goes. */
function expire(exchange: UpgradeExchange): void {
  exchange.timer = undefined;
  if (exchange.cancelled !== undefined || exchange.response !== undefined) return;
  const reason = upstreamTimeout();
  exchange.cancel(reason);
  const { req, socket, scope } = exchange.request;
  scope.log.warn(
    { code: errorCode(reason), upstream: exchange.upstream },
    'websocket upstream failed',
  );
  sendUpgradeError(req, socket, upstreamError(reason), scope);
}

function responseHead(statusCode: number, reason: string, headers: IncomingHttpHeaders): string {
  let head = `HTTP/1.1 ${statusCode} ${reason}\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) head += `${name}: ${v}\r\n`;
    else head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}
