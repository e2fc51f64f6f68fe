/**
 * The gateway's listeners: the main one, and the forward-auth and admin ones
 * when configured. Built early (their undo then runs after the parts that
 * hold their connections, WebSockets included, have closed); handlers are
 * attached once built, sockets bound by `listen`.
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { Http2Server, Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { createRequestHandler } from '../http/dispatch.js';
import { GatewayError } from '../errors.js';
import type { Metrics } from '../ops/metrics.js';
import type { Tracing } from '../ops/tracing.js';
import { IdentifiedResponse } from '../http/response-request-id.js';
import { answerClientError, answerExpectation, type ClientErrorAnswer } from '../http/respond.js';
import { translateHttp2Request } from '../http/http2-request.js';
import { built, type Built } from './builders.js';
import { createMainListener, type MainListener } from './main-listener.js';

/** What Node's HTTP/1.1 server reports of a request that did not arrive in time. */
const REQUEST_TIMEOUT = Object.assign(new Error('the first bytes did not arrive in time'), {
  code: 'ERR_HTTP_REQUEST_TIMEOUT',
});

type RequestHandler = ReturnType<typeof createRequestHandler>;
type Handle = RequestHandler['onRequest'];

export interface BoundAddresses {
  main: AddressInfo;
  admin?: AddressInfo;
  forwardAuth?: AddressInfo;
  /** Envoy's gRPC ext_authz (`forwardAuth.grpc`), bound by the gateway after these. */
  extAuthz?: AddressInfo;
}

export interface Listeners {
  /** The main listener's HTTP/1.1 server (with `listen.http2` or `listen.tls`, beside what binds the port). */
  main: Server;
  /** The main listener's connections: what binds the port, the HTTP/2 server, TLS reloads. */
  mainListener: MainListener;
  forwardAuth?: Server;
  admin?: Server;
  /** Attaches the handlers; each request's server span is opened, and active, before it is handled. */
  attach(handler: RequestHandler, admin: Handle | undefined, tracing: Tracing | undefined): void;
  /** Binds main, forward-auth and admin, in that order. */
  listen(): Promise<BoundAddresses>;
  /** The drain begins: the main and forward-auth listeners take no new connections. */
  stopAccepting(): void;
}

export function createListeners(
  config: GatewayConfig,
  metrics: Metrics,
  log: Logger,
): Built<Listeners> {
  const options = clientTimeouts(config.server, config.limits);
  const refused = refusedByServer(metrics, log);
  const main = createServer(options);
  main.on('checkExpectation', (req, res) => refused(answerExpectation(req, res)));
  const mainListener = createMainListener(main, {
    config,
    metrics,
    log,
    onStalled(socket) {
      metrics.http2Refused('preface_timeout');
      refused(answerClientError(REQUEST_TIMEOUT, socket), REQUEST_TIMEOUT.code);
    },
  });
  const forwardAuth = config.forwardAuth === undefined ? undefined : createServer(options);
  const admin =
    config.admin === undefined ? undefined : createServer({ ServerResponse: IdentifiedResponse });
  const all = [main, forwardAuth, admin].flatMap((s) => (s === undefined ? [] : [s]));
  for (const server of all)
    server.on('clientError', (err: NodeJS.ErrnoException, socket) =>
      refused(answerClientError(err, socket), err.code),
    );
  const traffic = forwardAuth === undefined ? [main] : [main, forwardAuth];
  const closed = new Map<Server, Promise<void>>();
  const stop = (s: Server) => {
    const close = () =>
      s === main ? mainListener.stop() : new Promise<void>((resolve) => s.close(() => resolve()));
    if (!closed.has(s)) closed.set(s, close());
    return closed.get(s) as Promise<void>;
  };
  const closeAll = async (servers: Server[]) => {
    const done = Promise.all(servers.map(stop));
    for (const s of servers) {
      if (s === main) mainListener.closeAll();
      else s.closeAllConnections();
    }
    await done;
  };
  const listeners: Listeners = {
    main,
    mainListener,
    ...(forwardAuth === undefined ? {} : { forwardAuth }),
    ...(admin === undefined ? {} : { admin }),
    attach(handler, adminHandle, tracing) {
      const traced = (handle: Handle): Handle =>
        tracing === undefined ? handle : (req, res) => tracing.handle(req, handle, res);
      const onRequest = traced(handler.onRequest);
      main.on('request', onRequest);
      main.on('upgrade', handler.onUpgrade);
      if (mainListener.http2 !== undefined)
        attachHttp2(mainListener.http2, onRequest, (req, res) =>
          refused(answerExpectation(req, res)),
        );
      forwardAuth?.on('request', traced(handler.onForwardAuthRequest));
      if (adminHandle !== undefined) admin?.on('request', adminHandle);
    },
    async listen() {
      const bound: BoundAddresses = {
        main: await listenOn(mainListener.bound, config.listen, 'listen'),
      };
      if (forwardAuth !== undefined && config.forwardAuth !== undefined)
        bound.forwardAuth = await listenOn(forwardAuth, config.forwardAuth, 'forwardAuth');
      if (admin !== undefined && config.admin !== undefined)
        bound.admin = await listenOn(admin, config.admin, 'admin');
      return bound;
    },
    stopAccepting: () => void traffic.forEach(stop),
  };
  // Admin last: its /readyz answers 503 while the traffic drains.
  return built(listeners, async () => {
    await closeAll(traffic);
    if (admin !== undefined) await closeAll([admin]);
  });
}

/**
 * Every HTTP/2 request, read as an HTTP/1.1 one (`http2-request.ts`), goes to
 * the same handler; an `Expect` other than `100-continue` gets the same JSON
 * 417 as over HTTP/1.1 (Node's compatibility API would answer a bare one).
 */
function attachHttp2(http2: Http2Server, onRequest: Handle, onExpectation: Handle): void {
  const translated = (handle: Handle) => (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const request = translateHttp2Request(req, res);
    handle(request.req, request.res);
  };
  const onHttp2Request = translated(onRequest);
  http2.on('checkExpectation', translated(onExpectation));
  http2.on('request', onHttp2Request);
  // CONNECT comes as its own event: the dispatcher refuses it (501) like any other request it cannot serve.
  http2.on('connect', onHttp2Request);
}

/** What Node's HTTP server would answer with a bare status line: the JSON error instead, counted and logged. */
function refusedByServer(metrics: Metrics, log: Logger) {
  // A request being handled is recorded when its response closes, with this answer.
  return (answer: ClientErrorAnswer | undefined, cause?: string): void => {
    if (answer === undefined || answer.handled) return;
    const { status, code, requestId } = answer;
    metrics.request({
      route: 'none',
      method: 'other',
      status,
      outcome: status >= 500 ? 'failed' : 'refused',
      reason: code,
      principal: 'none',
      seconds: undefined,
      upstreamSeconds: undefined,
      bytesIn: 0,
      bytesOut: 0,
    });
    log.info({ status, code, requestId, cause }, 'request refused by the HTTP server');
  };
}

/**
 * Node's limits on slow clients (408 past them) and idle keep-alive
 * connections. Node looks for expired requests every
 * `connectionsCheckingInterval` (30 s by default), which would stretch a
 * short limit: here at most half the shorter limit. A body's silence is
 * watched per request (`body-idle.ts`).
 */
function clientTimeouts(
  server: GatewayConfig['server'],
  limits: GatewayConfig['limits'],
): ServerOptions {
  const { headersTimeoutMs, keepAliveTimeoutMs } = server;
  const { requestTimeoutMs } = limits;
  const shortest = Math.min(headersTimeoutMs, requestTimeoutMs > 0 ? requestTimeoutMs : Infinity);
  return {
    // Each answer's X-Request-Id is set as its head is written (`response-request-id.ts`).
    ServerResponse: IdentifiedResponse,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(shortest / 2))),
  };
}

/** Binds `server`; a refusal (port taken, address not local, no permission) names the config key. */
function listenOn(
  server: NetServer,
  at: { host: string; port: number },
  key: string,
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'the port is taken' : (err.code ?? err.message);
      const where = `${at.host}:${at.port}`;
      reject(
        new GatewayError('unavailable', `Cannot listen on ${where} (${key}): ${why}.`, {
          cause: err,
        }),
      );
    };
    server.once('error', refused);
    server.listen(at.port, at.host, () => {
      server.off('error', refused);
      resolve(server.address() as AddressInfo);
    });
  });
}
