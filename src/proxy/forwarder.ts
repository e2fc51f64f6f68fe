/**
 * Forwarding with http-proxy's API (through http-proxy-3, the maintained
 * rewrite): one keep-alive agent per upstream origin, bodies streamed both
 * ways, the route's timeout as a 504, refused or broken upstreams as a 502.
 * Each origin's connections are shared between tenants by its
 * {@link TenantSlots}: a request waits for a free one within its route's
 * timeout, and a tenant past its share is refused with 429.
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
import {
  createTenantSlots,
  type SlotHolder,
  type SlotLimits,
  type SlotState,
  type TenantSlots,
} from './tenant-slots.js';

export interface ForwardTarget {
  upstream: string;
  timeoutMs: number;
}

export interface Forwarder {
  /** Forwards; records the upstream's time to response headers on `scope`. */
  web(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, scope: RequestScope): void;
  /**
   * Forwards an upgrade. `opened` is called with the upstream's socket once
   * the upstream accepted, just before the 101 goes to the client.
   */
  ws(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    target: ForwardTarget,
    log: Logger,
    opened?: (upstream: Duplex) => void,
  ): void;
  /** Proxied WebSockets still open. */
  openWebSockets(): number;
  /** Destroys proxied WebSockets and idle upstream connections. */
  close(): void;
}

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';

/** Parsed once per upstream URL; its pool is shared by every URL of the same origin. */
interface UpstreamTarget {
  upstream: string;
  url: URL;
  pool: { agent: HttpAgent; slots: TenantSlots<Forwarding> };
}

/** The slot bucket of requests without a tenant (public routes): a tenant id is never empty. */
const NO_TENANT = '';

const TENANT_BUSY = new GatewayError(
  'too_many_requests',
  'This tenant has as many requests in flight to this upstream as it may; retry shortly.',
  // A slot frees as soon as one of the tenant's own requests ends.
  { headers: { 'retry-after': '1' } },
);

/**
 * What the proxy's event handlers need to know of a request, kept on the
 * request itself: a WeakMap per request would cost the garbage collector
 * more than the whole lookup is worth on this path.
 */
interface Forwarding extends SlotHolder {
  at: number;
  scope: RequestScope | undefined;
  req: IncomingMessage;
  /** Set for plain requests (`web`), not for upgrades. */
  res: ServerResponse | undefined;
  target: UpstreamTarget | undefined;
  tenant: string;
  slot: SlotState;
  /** The route's timeout, running until the upstream answers (or accepts the upgrade). */
  timer: NodeJS.Timeout | undefined;
  /** The upstream request, once http-proxy has made it. */
  proxyReq: ClientRequest | undefined;
  /** The framing the header policy set from what Node parsed (`web` only). */
  framing: Framing;
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
    req,
    res: undefined,
    target: undefined,
    tenant: NO_TENANT,
    slot: 'none',
    timer: undefined,
    proxyReq: undefined,
    framing: undefined,
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
  if (forwarding.slot === 'waiting') {
    // Still in line for a connection: no upstream request exists, the gateway answers.
    forwarding.target?.pool.slots.leave(forwarding);
    const { res, scope } = forwarding;
    if (res === undefined || res.headersSent) return;
    if (scope !== undefined) {
      scope.refusal = 'gateway_timeout';
      scope.log.warn(
        { upstream: forwarding.target?.upstream },
        'no upstream connection came free within the route timeout',
      );
    }
    sendError(res, upstreamError(upstreamTimeout()));
    return;
  }
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

/** The request's response closed (answered or abandoned): its slot or its place in line goes. */
function leaveSlot(this: ServerResponse): void {
  const forwarding = forwardingOf(this.req);
  forwarding?.target?.pool.slots.leave(forwarding);
}

/**
 * @param pool connections per upstream origin and each tenant's share
 *   (config `upstreamPool`).
 */
export function createForwarder(pool: SlotLimits = { maxConnections: 512 }): Forwarder {
  // xfwd off: the header policy sets X-Forwarded-* itself, trusting only configured proxies.
  const proxy = createProxyServer({ xfwd: false, changeOrigin: false, prependPath: true });
  // The last word on framing, after http-proxy's own passes (issue 12).
  proxy.before('web', 'stream', reframe);
  const agents = new Map<string, HttpAgent>();

  /** Upgrades the upstream accepted: from then on the client socket carries WebSocket frames. */
  const upgraded = new WeakSet<IncomingMessage>();
  /** Client sockets of proxied WebSockets: the HTTP server no longer tracks them. */
  const webSockets = new Set<Duplex>();
  /** Who wants to hear that an upgrade was accepted (upgrades are rare: a WeakMap is cheap enough). */
  const onOpened = new WeakMap<IncomingMessage, (upstream: Duplex) => void>();

  // Fallback only: every call passes its own error callback.
  proxy.on('error', () => {});
  proxy.on('proxyReq', madeUpstreamRequest);
  proxy.on('proxyReqWs', (proxyReq, req) => {
    madeUpstreamRequest(proxyReq, req);
    const answered = (): void => stopTimeout(forwardingOf(req));
    proxyReq.once('response', answered);
    proxyReq.once('upgrade', (_res: IncomingMessage, upstream: Duplex) => {
      upgraded.add(req);
      onOpened.get(req)?.(upstream);
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
    // The upstream's `Connection` is about its hop. The client's connection
    // closes after this response when the client asked for it (RFC 9112
    // §9.6): http-proxy would otherwise set `keep-alive`, which Node obeys.
    proxyRes.headers.connection = res.shouldKeepAlive ? 'keep-alive' : 'close';
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

  /** Parsed once per upstream: its URL (http-proxy would parse a string per request) and its pool. */
  const upstreams = new Map<string, UpstreamTarget>();
  const pools = new Map<string, UpstreamTarget['pool']>();
  function upstreamOf(upstream: string): UpstreamTarget {
    let found = upstreams.get(upstream);
    if (found === undefined) {
      const url = new URL(upstream);
      let shared = pools.get(url.origin);
      if (shared === undefined) {
        const options = {
          keepAlive: true,
          keepAliveMsecs: 1000,
          // The slots bound the requests in flight. The agent must never
          // queue one itself: a request queued there cannot be answered
          // until a socket frees, whatever its timeout (issue 12).
          maxSockets: Infinity,
          maxFreeSockets: 64,
          scheduling: 'lifo' as const,
        };
        const agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
        closeOnStrayBytes(agent);
        agents.set(url.origin, agent);
        shared = { agent, slots: createTenantSlots(pool, send) };
        pools.set(url.origin, shared);
      }
      upstreams.set(upstream, (found = { upstream, url, pool: shared }));
    }
    return found;
  }

  /** Sends the request upstream: at once, or when a slot came free for it. */
  function send(forwarding: Forwarding): void {
    const { req, res, target, scope } = forwarding;
    if (res === undefined || target === undefined || scope === undefined) return;
    // A long upload that keeps moving is never cut. Only here: an upgrade has
    // no body, and its socket must not be read before http-proxy takes it.
    if (hasBody(req)) req.on('data', bodyMoved);
    proxy.web(req, res, { target: target.url, agent: target.pool.agent }, (err) => {
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
  }

  return {
    web(req, res, target, scope) {
      // The route's timeout starts now: it covers waiting for a connection.
      const forwarding = startForwarding(req, target.timeoutMs, scope);
      forwarding.framing = framingOf(req);
      forwarding.res = res;
      forwarding.target = upstreamOf(target.upstream);
      forwarding.tenant = scope.tenantId ?? NO_TENANT;
      const admitted = forwarding.target.pool.slots.acquire(forwarding);
      if (admitted === 'refused') {
        stopTimeout(forwarding);
        scope.refusal = TENANT_BUSY.code;
        sendError(res, TENANT_BUSY);
        return;
      }
      res.on('close', leaveSlot);
      if (admitted === 'held') send(forwarding);
    },
    ws(req, socket, head, target, log, opened) {
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
      if (opened !== undefined) onOpened.set(req, opened);
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

/** How a forwarded body is framed: chunked, a known length, or no body. */
type Framing = { chunked: true } | { length: string } | undefined;

function framingOf(req: IncomingMessage): Framing {
  const { 'transfer-encoding': chunked, 'content-length': length } = req.headers;
  if (chunked !== undefined) return { chunked: true };
  return length === undefined ? undefined : { length };
}

/**
 * A web pass run just before http-proxy makes the upstream request: the
 * framing is the one the gateway decided, whatever the passes before did.
 * http-proxy's `deleteLength` sets `content-length: 0` on a DELETE or OPTIONS
 * without one and drops `transfer-encoding`, while the chunked body is still
 * piped: the upstream then parsed that body as a request of its own (issue
 * 12, request smuggling). Node's client writes a GET's body unframed too
 * when no framing header is set.
 */
function reframe(req: IncomingMessage): void {
  const forwarding = forwardingOf(req);
  if (forwarding === undefined) return;
  const { headers } = req;
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const { framing } = forwarding;
  if (framing === undefined) return;
  if ('chunked' in framing) headers['transfer-encoding'] = 'chunked';
  else headers['content-length'] = framing.length;
}

/**
 * An upstream connection is reused only when its last exchange ended cleanly
 * (issue 12, response-queue poisoning): bytes that arrive while it idles in
 * the pool answer no request the gateway sent, and would be read as the
 * answer to the next request on it, another user's. Node destroys a
 * connection whose second response comes with the first; one that comes
 * later it would drop and reuse the connection. Here anything an idle
 * connection receives closes it.
 */
function closeOnStrayBytes(agent: HttpAgent): void {
  const keepSocketAlive = agent.keepSocketAlive.bind(agent) as (socket: Duplex) => boolean;
  const reuseSocket = agent.reuseSocket.bind(agent);
  // Node's returns whether to keep the socket; @types/node says void.
  (agent as unknown as { keepSocketAlive: (socket: Duplex) => boolean }).keepSocketAlive = (
    socket,
  ) => {
    if (socket.readableLength > 0) return false;
    socket.on('data', destroyIdleSocket);
    return keepSocketAlive(socket);
  };
  agent.reuseSocket = (socket, req) => {
    socket.off('data', destroyIdleSocket);
    reuseSocket(socket, req);
  };
}

function destroyIdleSocket(this: Duplex): void {
  this.destroy();
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
