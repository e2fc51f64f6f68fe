/**
 * Composition root: builds the gateway's parts from a validated config and
 * wires them together around the core (`core.ts`). Config is read before this
 * point and handed down; a reload hands down a new one.
 */
import { createServer, type IncomingMessage, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApiApp } from './api/app.js';
import { applySeed, readSeedFile } from './auth/seed.js';
import type { KeyRing } from './auth/tokens.js';
import type { GatewayConfig } from './config/index.js';
import { createCore } from './core.js';
import {
  createAdminRequestHandler,
  createRequestHandler,
  scopeOf,
  type ProxySettings,
} from './dispatch.js';
import { createMetrics } from './ops/metrics.js';
import { createRequestRecorder } from './ops/request-recorder.js';
import { createTracing } from './ops/tracing.js';
import { createOpsHandler } from './ops/ops-endpoints.js';
import { createReadiness } from './ops/readiness.js';
import { createAdmit } from './proxy/decide/admit.js';
import { createRouteRateLimits } from './proxy/decide/route-rate-limits.js';
import { createForwarder } from './proxy/forward/forwarder.js';
import { originalRequestForLog } from './proxy/decide/verify-request.js';
import { createLiveWebSockets } from './proxy/forward/live-websockets.js';
import { compileCors } from './proxy/decide/cors.js';
import { createHeaderPolicy } from './proxy/decide/header-policy.js';
import { compileRoutes } from './proxy/decide/routes.js';
import { clientAddress, createTrustCheck } from './proxy/decide/trusted-proxies.js';
import { answerClientError, answerExpectation, type ClientErrorAnswer } from './respond.js';
import type { Store } from './store/types.js';
import { VERSION } from './version.js';

export interface Gateway {
  server: Server;
  /** The admin listener, when `admin` is configured. */
  adminServer?: Server;
  /** The forward-auth listener, when `forwardAuth` is configured. */
  forwardAuthServer?: Server;
  store: Store;
  keyring: KeyRing;
  /** Starts listening; resolves with the bound addresses. */
  listen(): Promise<{ main: AddressInfo; admin?: AddressInfo; forwardAuth?: AddressInfo }>;
  /**
   * Applies a new config: routes, tenant rules, CORS, identity and stripped
   * headers, trusted proxies, readiness and signing keys change at once,
   * without dropping connections. Every other top-level key that changed
   * keeps its old value and is reported in `needsRestart` (`ON_RELOAD`).
   */
  reload(config: GatewayConfig): Promise<{ needsRestart: string[] }>;
  /**
   * Re-reads the config file (when the gateway was given one) and applies
   * it; an invalid file keeps the old config. Logged and counted.
   */
  reloadFromFile?: () => Promise<ReloadResult>;
  /**
   * Graceful stop: readiness fails, no new connections, in-flight requests and
   * WebSockets get `drainMs` to finish, then everything is closed.
   */
  close(drainMs?: number): Promise<void>;
}

/** How a reload from the file ended: applied (naming the keys that need a restart), or refused. */
export type ReloadResult = { ok: true; needsRestart: string[] } | { ok: false; problems: string[] };

export async function createGateway(
  config: GatewayConfig,
  log: Logger,
  options: { reloadConfig?: () => Promise<GatewayConfig> } = {},
): Promise<Gateway> {
  // The metrics read the core's parts only when scraped, after it exists.
  const metrics = createMetrics({
    version: VERSION,
    tokenCache: () => core.verifier.stats(),
    sessionCache: () => core.sessions.stats(),
    inFlight: () => recorder.inFlight(),
    passwordQueueDepth: () => core.passwords.queueDepth(),
    signingKeyCreatedAt: () => core.keyring.current.signing.createdAt,
    pingStore: () => core.store.ping(),
    rateLimitDecisions: () => rateLimits.drainDecisions(),
    rateLimitBuckets: () => rateLimits.size(),
  });
  // Only a trusted proxy may continue its trace (`trusted` follows reloads).
  const tracing = createTracing(config.tracing, (peer) => trusted(peer), log);
  const core = await createCore(
    config,
    log,
    {
      storeCall: (operation, seconds, ok) => metrics.storeCall(operation, seconds, ok),
      passwordWait: (seconds) => metrics.passwordWait(seconds),
      step: tracing?.step,
      revocationConfirmed: (seconds, fenced) => metrics.revocationConfirmed(seconds, fenced),
      auditWriteFailure: () => metrics.auditWriteFailure(),
    },
    { serving: true },
  ).catch(async (err: unknown) => {
    await tracing?.shutdown();
    throw err;
  });
  const { store, keyring, sessions, verifier } = core;
  sessions.watch({ onEvent: (event) => metrics.sessionEvent(event.kind), onLive: () => {} });
  try {
    if (config.seed !== undefined) {
      const summary = await applySeed(await readSeedFile(config.seed), core);
      log.info({ seed: config.seed, ...summary }, 'seed applied');
    }
  } catch (err) {
    await core.close();
    await tracing?.shutdown();
    throw err;
  }

  let current = config;
  let trusted = createTrustCheck(config.trustedProxies);
  const settings: ProxySettings = {
    routes: compileRoutes(config.routes),
    headers: createHeaderPolicy(config.identityHeaders, trusted, config.stripHeaders),
    apiCors: config.cors === undefined ? undefined : compileCors(config.cors),
  };
  const readiness = createReadiness({
    store,
    keyring,
    requireStore: () => current.readiness.requireStore,
  });
  const forwarder = createForwarder(config.upstreamPool);
  for (const route of config.routes) {
    if (route.tls?.insecureSkipVerify === true)
      log.warn(
        { route: route.prefix, upstream: route.upstream },
        'routes[].tls.insecureSkipVerify: this upstream is not verified; anyone on the path can read and change its traffic',
      );
  }
  // Buckets live on across reloads: a route's are keyed by its label, rate and burst.
  const rateLimits = createRouteRateLimits({
    leases: store.leaseRates?.bind(store),
    intervalMs: config.rateLimits.reconcileIntervalMs,
    log,
    onReconcileFailure: () => metrics.rateLimitReconcileFailed(),
  });
  const liveWebSockets = createLiveWebSockets({
    sessions,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
  });

  const reload: Gateway['reload'] = async (next) => {
    const needsRestart = RESTART_KEYS.filter(
      (key) => JSON.stringify(next[key]) !== JSON.stringify(current[key]),
    );
    if (keyring.reload !== undefined && next.tokens.keys === current.tokens.keys)
      await keyring.reload();
    verifier.clear();
    trusted = createTrustCheck(next.trustedProxies);
    settings.routes = compileRoutes(next.routes);
    forwarder.retainUpstreams(
      settings.routes.all.flatMap(({ upstream, tls }) =>
        upstream === undefined ? [] : [{ upstream, tls }],
      ),
    );
    settings.headers = createHeaderPolicy(next.identityHeaders, trusted, next.stripHeaders);
    settings.apiCors = next.cors === undefined ? undefined : compileCors(next.cors);
    current = { ...next, ...Object.fromEntries(needsRestart.map((k) => [k, current[k]])) };
    return { needsRestart };
  };
  const readConfig = options.reloadConfig;
  /** Re-reads the config file and applies it: SIGHUP and `POST /config/reload` alike. */
  const reloadFromFile =
    readConfig === undefined
      ? undefined
      : async (): Promise<ReloadResult> => {
          try {
            const { needsRestart } = await reload(await readConfig());
            metrics.configReload(true);
            if (needsRestart.length > 0)
              log.warn({ needsRestart }, 'config reloaded; some keys need a restart');
            else log.info({}, 'config reloaded');
            return { ok: true, needsRestart };
          } catch (err) {
            metrics.configReload(false);
            log.error({ err }, 'config reload refused: the old config keeps serving');
            return { ok: false, problems: problemsOf(err) };
          }
        };
  const adminOps = createOpsHandler({
    metrics,
    readiness,
    listener: 'admin',
    ...(config.admin?.configReload && reloadFromFile ? { reload: reloadFromFile } : {}),
  });

  const clientIp = (peer: string | undefined, req: IncomingMessage) =>
    clientAddress(peer, req.headers['x-forwarded-for'], trusted);
  const recording = { log, metrics, clientIp, originalRequest: originalRequestForLog };
  const recorder = createRequestRecorder({ ...recording, level: 'info' });

  const api = createApiApp({
    store,
    accounts: core.accounts,
    authenticate: core.authenticate,
    sessions,
    bruteForce: core.bruteForce,
    keyring,
    clientIp: (req) => clientIp(req.socket.remoteAddress, req),
    signupEnabled: config.signup.enabled,
    bodyLimit: config.limits.bodyBytes,
    onTokenIssued: () => metrics.tokenIssued(),
    onLoginRefused: (reason) => metrics.loginRefused(reason),
    audit: core.audit,
    scopeOf,
  });
  const handler = createRequestHandler({
    log,
    metrics,
    recorder,
    api: api.callback(),
    // Never on the public listener unless asked for (`listen.opsEndpoints`).
    ...(config.listen.opsEndpoints
      ? { ops: createOpsHandler({ metrics, readiness, listener: 'listen' }) }
      : {}),
    forwardAuthHere: config.forwardAuth === undefined,
    bodyIdleMs: config.server.requestBodyIdleTimeoutMs,
    admit: createAdmit(core.authenticate),
    rateLimits,
    forwarder,
    liveWebSockets,
    settings,
  });
  const serverOptions = clientTimeouts(config.server, config.limits);
  // Traced: each request's server span is opened, and active, before it is handled.
  const traced = (handle: typeof handler.onRequest): typeof handler.onRequest =>
    tracing === undefined ? handle : (req, res) => tracing.handle(req, handle, res);
  const server = createServer(serverOptions, traced(handler.onRequest));
  server.on('upgrade', handler.onUpgrade);
  // What Node's HTTP server would answer with a bare status line: the JSON error instead.
  // A request being handled is recorded when its response closes, with this answer.
  const refusedByServer = (answer: ClientErrorAnswer | undefined, cause?: string): void => {
    if (answer === undefined || answer.handled) return;
    const { status, code, requestId } = answer;
    metrics.request({
      route: 'none',
      method: 'other',
      status,
      outcome: status >= 500 ? 'failed' : 'refused',
      reason: code,
      seconds: undefined,
      upstreamSeconds: undefined,
      bytesIn: 0,
      bytesOut: 0,
    });
    log.info({ status, code, requestId, cause }, 'request refused by the HTTP server');
  };
  server.on('clientError', (err: NodeJS.ErrnoException, socket) =>
    refusedByServer(answerClientError(err, socket), err.code),
  );
  server.on('checkExpectation', (req, res) => refusedByServer(answerExpectation(req, res)));

  let forwardAuthServer: Server | undefined;
  if (config.forwardAuth !== undefined) {
    forwardAuthServer = createServer(serverOptions, traced(handler.onForwardAuthRequest));
    forwardAuthServer.on('clientError', (err: NodeJS.ErrnoException, socket) =>
      refusedByServer(answerClientError(err, socket), err.code),
    );
  }

  let adminServer: Server | undefined;
  if (config.admin !== undefined) {
    adminServer = createServer(
      createAdminRequestHandler({
        recorder: createRequestRecorder({ ...recording, level: 'debug' }),
        ops: adminOps,
      }),
    );
    adminServer.on('clientError', (err: NodeJS.ErrnoException, socket) =>
      refusedByServer(answerClientError(err, socket), err.code),
    );
  }

  return {
    server,
    ...(adminServer === undefined ? {} : { adminServer }),
    ...(forwardAuthServer === undefined ? {} : { forwardAuthServer }),
    store,
    keyring,
    async listen() {
      const main = await listenOn(server, config.listen.host, config.listen.port);
      const bound: Awaited<ReturnType<Gateway['listen']>> = { main };
      if (forwardAuthServer !== undefined && config.forwardAuth !== undefined)
        bound.forwardAuth = await listenOn(
          forwardAuthServer,
          config.forwardAuth.host,
          config.forwardAuth.port,
        );
      if (adminServer !== undefined && config.admin !== undefined)
        bound.admin = await listenOn(adminServer, config.admin.host, config.admin.port);
      return bound;
    },
    reload,
    ...(reloadFromFile === undefined ? {} : { reloadFromFile }),
    async close(drainMs = 0) {
      readiness.drain();
      const traffic = forwardAuthServer === undefined ? [server] : [server, forwardAuthServer];
      const closed = Promise.all(
        traffic.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
      );
      const deadline = Date.now() + drainMs;
      while ((recorder.inFlight() > 0 || forwarder.openWebSockets() > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      liveWebSockets.close();
      forwarder.close();
      for (const s of traffic) s.closeAllConnections();
      await closed;
      if (adminServer !== undefined) {
        const adminClosed = new Promise<void>((resolve) => adminServer.close(() => resolve()));
        adminServer.closeAllConnections();
        await adminClosed;
      }
      await rateLimits.close();
      await core.close();
      await tracing?.shutdown();
    },
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
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(shortest / 2))),
  };
}

/**
 * What a reload does with each top-level config key: applies it at once
 * (`live`), or keeps the old value and names the key in `needsRestart`. The
 * type makes a key added to the schema a compile error until it is decided
 * here; test/ops/reload-keys.redis.test.ts shows each live key taking effect.
 * docs/operations.md ("Reload") lists them.
 */
const ON_RELOAD: Readonly<Record<keyof GatewayConfig, 'live' | 'restart'>> = {
  listen: 'restart',
  admin: 'restart',
  forwardAuth: 'restart',
  store: 'restart',
  seed: 'restart', // applied at start only
  // The token verifier and issuer keep the settings they were built with; the
  // key directory itself is re-read on every reload (same `tokens.keys`).
  tokens: 'restart',
  revocation: 'restart',
  signup: 'restart',
  passwords: 'restart',
  limits: 'restart',
  audit: 'restart',
  server: 'restart',
  upstreamPool: 'restart',
  rateLimits: 'restart',
  trustedProxies: 'live',
  identityHeaders: 'live',
  stripHeaders: 'live',
  routes: 'live',
  cors: 'live',
  log: 'restart',
  tracing: 'restart',
  readiness: 'live', // read at each /readyz
  demo: 'restart', // the echo upstream is started by `serve`
  shutdown: 'restart',
};

/** Config keys a reload cannot apply to a running process. */
const RESTART_KEYS = (Object.keys(ON_RELOAD) as (keyof GatewayConfig)[]).filter(
  (key) => ON_RELOAD[key] === 'restart',
);

function problemsOf(err: unknown): string[] {
  const problems = (err as { problems?: unknown }).problems;
  return Array.isArray(problems) ? problems.map(String) : [String((err as Error).message ?? err)];
}

function listenOn(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
