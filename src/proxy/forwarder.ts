/**
 * Forwarding with http-proxy's API (through http-proxy-3, the maintained
 * rewrite): one keep-alive agent per upstream origin, bodies streamed both
 * ways, the route's timeout as a 504, refused or broken upstreams as a 502.
 * Every proxy error goes through the per-call callback, so none can reach the
 * process as an unhandled `error` event.
 */
import {
  Agent as HttpAgent,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import { sendError, sendUpgradeError } from '../respond.js';
import type { RequestScope } from '../scope.js';

export interface ForwardTarget {
  upstream: string;
  timeoutMs: number;
}

export interface Forwarder {
  /** Forwards; records the upstream's time to response headers on `scope`. */
  web(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, scope: RequestScope): void;
  ws(req: IncomingMessage, socket: Duplex, head: Buffer, target: ForwardTarget, log: Logger): void;
  /** Proxied WebSockets still open. */
  openWebSockets(): number;
  /** Destroys proxied WebSockets and idle upstream connections. */
  close(): void;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';

/**
 * What the proxy's event handlers need to know of a request, kept on the
 * request itself: a WeakMap per request would cost the garbage collector
 * more than the whole lookup is worth on this path.
 */
interface Forwarding {
  at: number;
  scope: RequestScope | undefined;
  /** The route's timeout, running until the upstream answers (or accepts the upgrade). */
  timer: NodeJS.Timeout | undefined;
  /** The upstream request, once http-proxy has made it. */
  proxyReq: ClientRequest | undefined;
  timedOut: boolean;
}
const FORWARDING = Symbol('tenant-gateway.forwarding');
type WithForwarding = IncomingMessage & { [FORWARDING]?: Forwarding };
const forwardingOf = (req: IncomingMessage): Forwarding | undefined =>
  (req as WithForwarding)[FORWARDING];

/**
 * Starts the route's timeout for `req`: idle time without an answer. One plain
 * timer per request, cleared when the answer starts (`web` has request-body
 * chunks push it back). A socket timeout (`ClientRequest.setTimeout`),
 * re-armed on every read and write, cost the proxy path 11k instructions per
 * request (callgrind), more than three forwarded headers.
 */
function startForwarding(
  req: IncomingMessage,
  timeoutMs: number,
  scope: RequestScope | undefined,
): Forwarding {
  const forwarding: Forwarding = {
    at: performance.now(),
    scope,
    timer: undefined,
    proxyReq: undefined,
    timedOut: false,
  };
  forwarding.timer = setTimeout(expire, timeoutMs, forwarding);
  (req as WithForwarding)[FORWARDING] = forwarding;
  return forwarding;
}

/** A chunk of a request body arrived: the request is not idle. */
function bodyMoved(this: IncomingMessage): void {
  forwardingOf(this)?.timer?.refresh();
}

/** The upstream answered, failed, or the client left: the timeout has nothing left to cut. */
function stopTimeout(forwarding: Forwarding | undefined): void {
  if (forwarding?.timer === undefined) return;
  clearTimeout(forwarding.timer);
  forwarding.timer = undefined;
}

/** Destroying the upstream request ends in the per-call error callback, as a 504. */
function expire(forwarding: Forwarding): void {
  forwarding.timer = undefined;
  forwarding.timedOut = true;
  // Not made yet (no socket): the 'proxyReq' handler destroys it when it is.
  forwarding.proxyReq?.destroy(upstreamTimeout());
}

/** http-proxy made the upstream request for `req`. */
function madeUpstreamRequest(proxyReq: ClientRequest, req: IncomingMessage): void {
  const forwarding = forwardingOf(req);
  if (forwarding === undefined) return;
  forwarding.proxyReq = proxyReq;
  if (forwarding.timedOut) proxyReq.destroy(upstreamTimeout());
}

export function createForwarder(): Forwarder {
  // xfwd off: the header policy sets X-Forwarded-* itself, trusting only configured proxies.
  const proxy = createProxyServer({ xfwd: false, changeOrigin: false, prependPath: true });
  const agents = new Map<string, HttpAgent>();

  /** Upgrades the upstream accepted: from then on the client socket carries WebSocket frames. */
  const upgraded = new WeakSet<IncomingMessage>();
  /** Client sockets of proxied WebSockets: the HTTP server no longer tracks them. */
  const webSockets = new Set<Duplex>();

  // Fallback only: every call passes its own error callback.
  proxy.on('error', () => {});
  proxy.on('proxyReq', madeUpstreamRequest);
  proxy.on('proxyReqWs', (proxyReq, req) => {
    madeUpstreamRequest(proxyReq, req);
    const answered = (): void => stopTimeout(forwardingOf(req));
    proxyReq.once('response', answered);
    proxyReq.once('upgrade', () => {
      upgraded.add(req);
      answered();
    });
  });
  // The client left before the answer: http-proxy destroys the upstream request without a callback.
  proxy.on('econnreset', (_err, req) => stopTimeout(forwardingOf(req)));
  proxy.on('proxyRes', (proxyRes, req, res) => {
    const forwarding = forwardingOf(req);
    stopTimeout(forwarding);
    if (forwarding?.scope !== undefined)
      forwarding.scope.upstreamMs = performance.now() - forwarding.at;
    // Only the body is piped, never the trailers; and a `Trailer` header on a
    // response Node cannot chunk (an HTTP/1.0 client) makes it throw
    // ERR_HTTP_TRAILER_INVALID inside the pipe, an uncaught exception.
    if (proxyRes.headers.trailer !== undefined) delete proxyRes.headers.trailer;
    // A pipe does not end its destination when the source dies: an upstream
    // that closes mid-body must cut the client's response, not leave it hanging.
    proxyRes.once('close', () => {
      if (!proxyRes.complete) res.destroy();
    });
  });

  /** Parsed once per upstream: its URL (http-proxy would parse a string per request) and its agent. */
  const upstreams = new Map<string, { url: URL; agent: HttpAgent }>();
  function upstreamOf(upstream: string): { url: URL; agent: HttpAgent } {
    let found = upstreams.get(upstream);
    if (found === undefined) {
      const url = new URL(upstream);
      let agent = agents.get(url.origin);
      if (agent === undefined) {
        const options = {
          keepAlive: true,
          keepAliveMsecs: 1000,
          maxSockets: 512,
          maxFreeSockets: 64,
          scheduling: 'lifo' as const,
        };
        agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
        agents.set(url.origin, agent);
      }
      upstreams.set(upstream, (found = { url, agent }));
    }
    return found;
  }

  return {
    web(req, res, target, scope) {
      const forwarding = startForwarding(req, target.timeoutMs, scope);
      // A long upload that keeps moving is never cut. Only here: an upgrade has
      // no body, and its socket must not be read before http-proxy takes it.
      if (hasBody(req)) req.on('data', bodyMoved);
      const { url, agent } = upstreamOf(target.upstream);
      proxy.web(req, res, { target: url, agent }, (err) => {
        stopTimeout(forwarding);
        const { log } = scope;
        const error = upstreamError(err);
        if (res.headersSent) {
          // The answer has begun: all we can do is cut it, so the client sees a broken response.
          log.warn({ code: (err as NodeJS.ErrnoException).code }, 'upstream broke mid-response');
          res.destroy();
          return;
        }
        log.warn(
          { code: (err as NodeJS.ErrnoException).code, upstream: target.upstream },
          error.message,
        );
        sendError(res, error);
      });
    },
    ws(req, socket, head, target, log) {
      // The header policy has set the request's id on the forwarded headers.
      const requestId = req.headers[REQUEST_ID_HEADER] as string | undefined;
      if (!isWebSocketUpgrade(req)) {
        // http-proxy would destroy the socket without a word.
        sendUpgradeError(
          req,
          socket,
          new GatewayError('invalid_request', 'Only WebSocket upgrades (GET) are proxied.'),
          requestId,
        );
        return;
      }
      const forwarding = startForwarding(req, target.timeoutMs, undefined);
      webSockets.add(socket);
      socket.once('close', () => {
        webSockets.delete(socket);
        stopTimeout(forwarding);
      });
      proxy.ws(req, socket, head, { target: upstreamOf(target.upstream).url }, (err) => {
        stopTimeout(forwarding);
        const code = (err as NodeJS.ErrnoException).code;
        if (upgraded.has(req)) {
          // The socket carries WebSocket frames now: an HTTP answer would be garbage to the client.
          log.warn({ code, upstream: target.upstream }, 'websocket upstream broke');
          socket.destroy();
          return;
        }
        log.warn({ code, upstream: target.upstream }, 'websocket upstream failed');
        sendUpgradeError(req, socket, upstreamError(err), requestId);
      });
    },
    openWebSockets: () => webSockets.size,
    close() {
      for (const socket of webSockets) socket.destroy();
      for (const agent of agents.values()) agent.destroy();
      proxy.close();
    },
  };
}

function upstreamTimeout(): Error {
  return Object.assign(new Error('upstream timeout'), { code: UPSTREAM_TIMEOUT });
}

/**
 * Whether a body follows the request's headers (RFC 9112 §6.3). Not
 * `req.complete`: Node emits 'request' before it parses the end of even a
 * bodiless GET, so that is false for every request.
 */
function hasBody(req: IncomingMessage): boolean {
  const { 'transfer-encoding': chunked, 'content-length': length } = req.headers;
  return chunked !== undefined || (length !== undefined && length !== '0');
}

function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.method === 'GET' && req.headers.upgrade?.toLowerCase() === 'websocket';
}

function upstreamError(err: unknown): GatewayError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === UPSTREAM_TIMEOUT) {
    return new GatewayError('gateway_timeout', 'The upstream did not answer in time.');
  }
  return new GatewayError('bad_gateway', 'The upstream refused or broke the connection.');
}
