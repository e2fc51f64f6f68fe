/**
 * The way a request travels, readable in one place:
 *
 *   socket → request id, access log, path normalisation
 *          → /healthz, /readyz, /metrics → ops (only with listen.opsEndpoints; else admin listener only)
 *          → /1/..., /.well-known/...    → CORS (top-level `cors`) → Koa api (Basic or Bearer)
 *          → /auth/verify                → verdict only (forward-auth)
 *          → a route (host, then prefix) → CORS preflight answered, or
 *                                          authenticate (public routes: only a token that
 *                                          comes) → match tenant → rewrite headers → forward
 *          → nothing                     → 404
 *
 * Upgrade (WebSocket) requests take the same path through `admit`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Principal } from './auth/authenticate.js';
import { watchBodyIdle } from './body-idle.js';
import { GatewayError, isGatewayError } from './errors.js';
import type { Metrics } from './ops/metrics.js';
import type { RequestRecorder } from './ops/request-recorder.js';
import { anonymousAllowed, tenantChecks, type Admit, type Who } from './proxy/decide/admit.js';
import {
  isForwardAuthPath,
  originalHosts,
  originalRequestViews,
} from './proxy/decide/verify-request.js';
import type { Cors } from './proxy/decide/cors.js';
import type { RouteRateLimits } from './proxy/decide/route-rate-limits.js';
import type { Forwarder } from './proxy/forward/forwarder.js';
import type { LiveWebSockets } from './proxy/forward/live-websockets.js';
import type { HeaderPolicy } from './proxy/decide/header-policy.js';
import { normaliseTarget, type NormalisedTarget } from './proxy/decide/normalise-path.js';
import { checkTransferCoding } from './proxy/decide/transfer-coding.js';
import type { RouteTable } from './proxy/decide/route-table.js';
import {
  ANY_HOST,
  hostnamesOf,
  proxiedRoute,
  routeOf,
  upstreamPathOf,
  type CompiledRoute,
  type ProxiedRoute,
} from './proxy/decide/routes.js';
import { requestView, type RequestView } from './proxy/decide/tenant-match.js';
import { takeRequestId } from './request-id.js';
import { pathOf } from './ops/access-log.js';
import { settledRefusal } from './ops/outcome.js';
import { sendError, sendUpgradeError } from './respond.js';
import type { RequestScope } from './scope.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What a config reload may change while requests are in flight. */
export interface ProxySettings {
  routes: RouteTable<CompiledRoute>;
  headers: HeaderPolicy;
  /** CORS of the identity endpoints (config `cors`). */
  apiCors: Cors | undefined;
}

export interface DispatchDeps {
  log: Logger;
  metrics: Metrics;
  /** Opens each request's scope and records its outcome. */
  recorder: RequestRecorder;
  /** Whether `/auth/verify` is on this listener; false when it has a listener of its own. */
  forwardAuthHere: boolean;
  /** `server.requestBodyIdleTimeoutMs`: the longest silence within a request body. */
  bodyIdleMs: number;
  /** The Koa api's request handler. */
  api: Handler;
  /** The probe endpoints when `listen.opsEndpoints` puts them on this listener; answers false for other paths. */
  ops?: (path: string, req: IncomingMessage, res: ServerResponse, scope: RequestScope) => boolean;
  admit: Admit;
  /** The routes' per-tenant and per-user token buckets. */
  rateLimits: RouteRateLimits;
  forwarder: Forwarder;
  /** Keeps each open WebSocket's token alive, or closes it (revocation, expiry, …). */
  liveWebSockets?: LiveWebSockets;
  settings: ProxySettings;
}

const BODY_IDLE = new GatewayError(
  'request_timeout',
  'The request body stopped arriving (server.requestBodyIdleTimeoutMs).',
  // What is left of the body would be read as the next request.
  { headers: { connection: 'close' } },
);

/** Marks a connection whose last answer closes it (`Connection: close` on a refusal). */
const CLOSING = Symbol('tenant-gateway.closing');
type ClosingSocket = IncomingMessage['socket'] & { [CLOSING]?: boolean };

/** The scope rides on the request (a per-request WeakMap entry costs the GC more). */
const SCOPE = Symbol('tenant-gateway.scope');
type WithScope = IncomingMessage & { [SCOPE]?: RequestScope };

/** The scope the dispatcher opened for `req`. */
export function scopeOf(req: IncomingMessage): RequestScope {
  const scope = (req as WithScope)[SCOPE];
  if (scope === undefined) throw new Error('request did not come through the dispatcher');
  return scope;
}

export function createRequestHandler(deps: DispatchDeps) {
  const { admit, forwarder, metrics, recorder, rateLimits } = deps;

  /**
   * authenticate → match tenant → rewrite headers → forward. Without an await
   * when the token and its session are cached (the steady state); a refusal
   * is thrown or rejected to the caller's `fail`.
   */
  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    target: NormalisedTarget,
    route: ProxiedRoute,
    hosts: readonly (string | undefined)[],
  ): void | Promise<void> {
    deps.settings.headers.checkFraming(req);
    const checks = tenantChecks(deps.settings.routes, viewOf(req, target), route, hosts);
    if (anonymousAllowed(req.headers.authorization, checks)) {
      return send(req, res, scope, target, route, undefined);
    }
    const admitted = admit(req.headers.authorization, checks, scope);
    if (admitted instanceof Promise) {
      return admitted.then((principal) => limit(req, res, scope, target, route, principal));
    }
    return limit(req, res, scope, target, route, admitted);
  }

  /** The route's rate limits for an authenticated request, then `send`. */
  function limit(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    target: NormalisedTarget,
    route: ProxiedRoute,
    principal: Principal,
  ): void | Promise<void> {
    if (route.rateLimit !== undefined) {
      const waiting = rateLimits.take(route.rateLimit, principal);
      if (waiting !== undefined) {
        return waiting.then(() => send(req, res, scope, target, route, principal));
      }
    }
    send(req, res, scope, target, route, principal);
  }

  function send(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    target: NormalisedTarget,
    route: ProxiedRoute,
    principal: Principal | undefined,
  ): void {
    if (res.destroyed) return; // the client left while we were deciding
    deps.settings.headers.rewrite(req, principal, {
      requestId: scope.requestId,
      stripAuthorization: route.stripAuthorization,
      upgrade: false,
    });
    req.url = forwardedUrl(route, target);
    forwarder.web(req, res, route, scope);
  }

  async function verify(
    req: IncomingMessage,
    res: ServerResponse,
    scope: RequestScope,
    target: NormalisedTarget,
  ) {
    const { routes } = deps.settings;
    deps.settings.headers.checkFraming(req);
    const views = originalRequestViews(req, target.path, target.query);
    const hosts = routes.byHost ? hostnamesOf(originalHosts(req, target.path)) : ANY_HOST;
    const checks = views.flatMap((view) =>
      tenantChecks(routes, view, routeOf(routes, view.path, hosts), hosts),
    );
    const principal = anonymousAllowed(req.headers.authorization, checks)
      ? undefined
      : await admit(req.headers.authorization, checks, scope);
    res
      .writeHead(200, {
        ...deps.settings.headers.identityHeaders(principal),
        'cache-control': 'no-store',
        'content-length': '0',
      })
      .end();
  }

  /**
   * The request body stopped arriving: 408, then the upstream request (if
   * any) is aborted. In that order: aborting destroys the request body, and
   * with it the connection the 408 must leave on. An answer already under
   * way is cut instead.
   */
  function bodyStalled(res: ServerResponse, fail: (err: unknown) => void) {
    if (res.headersSent) {
      forwarder.abandon(res);
      return;
    }
    fail(BODY_IDLE);
    res.once('finish', () => forwarder.abandon(res));
  }

  /**
   * Opens the request's scope and reads its target; undefined when the
   * request was already answered (refused) or must not be.
   */
  function begin(req: IncomingMessage, res: ServerResponse) {
    // Pipelined behind a refusal that ends the connection: its framing is
    // suspect, and its answer would never be read. Never forwarded.
    if ((req.socket as ClosingSocket)[CLOSING] === true) return undefined;
    const scope = openScope(req, res, recorder);
    if (req.headers['transfer-encoding'] !== undefined && below11(req)) {
      // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty
      // framing; the message is answered, then the connection closes, and
      // nothing pipelined behind it is read.
      res.shouldKeepAlive = false;
      (req.socket as ClosingSocket)[CLOSING] = true;
    }
    const fail = (err: unknown) => {
      if (!isGatewayError(err) || err.status >= 500) scope.log.warn({ err }, 'request failed');
      const socket = req.socket as ClosingSocket | null;
      if (socket !== null && isGatewayError(err) && err.headers.connection === 'close')
        socket[CLOSING] = true;
      if (!res.headersSent) sendError(res, err);
    };
    watchBodyIdle(req, res, deps.bodyIdleMs, () => bodyStalled(res, fail));
    try {
      return { scope, fail, target: normaliseTarget(req.url) };
    } catch (err) {
      fail(err);
      return undefined;
    }
  }

  const onRequest: Handler = (req, res) => {
    const begun = begin(req, res);
    if (begun === undefined) return;
    const { scope, fail, target } = begun;
    if (deps.ops?.(target.path, req, res, scope)) return;
    if (isApiPath(target.path)) {
      scope.route = 'api';
      const cors = deps.settings.apiCors;
      if (cors?.preflight(req, res)) return;
      cors?.decorate(req, res);
      try {
        // The API reads bodies itself: a coding it does not implement would be read as JSON.
        checkTransferCoding(req.headers['transfer-encoding']);
      } catch (err) {
        return fail(err);
      }
      req.url = urlOf(target);
      return deps.api(req, res);
    }
    if (deps.forwardAuthHere && isForwardAuthPath(target.path)) {
      scope.route = 'forward-auth';
      return void verify(req, res, scope, target).catch(fail);
    }
    try {
      const hosts = hostsOf(req);
      const route = routeOf(deps.settings.routes, target.path, hosts);
      if (route === undefined)
        throw new GatewayError('not_found', 'No such endpoint and no route.');
      scope.route = route.label;
      if (route.cors?.preflight(req, res)) return;
      route.cors?.decorate(req, res);
      forward(req, res, scope, target, proxiedRoute(route), hosts)?.catch(fail);
    } catch (err) {
      fail(err);
    }
  };

  /** The request's hostnames, when some route names hosts. */
  function hostsOf(req: IncomingMessage): readonly (string | undefined)[] {
    return deps.settings.routes.byHost
      ? hostnamesOf(deps.settings.headers.routingHosts(req))
      : ANY_HOST;
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const requestId = takeRequestId(req);
    const log = deps.log.child({ requestId });
    let routeLabel = 'none';
    /** Who the upgrade acts for, once its token verified: a refusal after names them. */
    const who: Who = {};
    const refuse = (err: unknown) => {
      upgradeRefused(log, metrics, { path: pathOf(req.url), route: routeLabel, who }, err);
      sendUpgradeError(req, socket, err, requestId);
    };
    socket.on('error', () => socket.destroy());
    let target: NormalisedTarget;
    try {
      target = normaliseTarget(req.url);
    } catch (err) {
      return refuse(err);
    }
    let route: ProxiedRoute;
    let hosts: readonly (string | undefined)[];
    try {
      hosts = hostsOf(req);
      const matched = routeOf(deps.settings.routes, target.path, hosts);
      if (matched === undefined) throw new GatewayError('not_found', 'No route for this upgrade.');
      routeLabel = matched.label;
      route = proxiedRoute(matched);
    } catch (err) {
      return refuse(err);
    }
    Promise.resolve()
      .then(() => {
        deps.settings.headers.checkFraming(req);
        const checks = tenantChecks(deps.settings.routes, viewOf(req, target), route, hosts);
        if (anonymousAllowed(req.headers.authorization, checks)) return undefined;
        return admit(req.headers.authorization, checks, who);
      })
      .then((principal) => {
        // A WebSocket upgrade is one request to the route: it takes one token.
        if (principal === undefined || route.rateLimit === undefined) return principal;
        const waiting = rateLimits.take(route.rateLimit, principal);
        return waiting === undefined ? principal : waiting.then(() => principal);
      })
      .then((principal) => {
        if (socket.destroyed) return;
        deps.settings.headers.rewrite(req, principal, {
          requestId,
          stripAuthorization: route.stripAuthorization,
          upgrade: true,
        });
        req.url = forwardedUrl(route, target);
        metrics.upgrade(routeLabel, undefined);
        log.info(
          {
            path: target.path,
            route: routeLabel,
            tenantId: principal?.tenantId,
            userId: principal?.userId,
          },
          'upgrade',
        );
        const live = deps.liveWebSockets;
        // An anonymous WebSocket (public route) has no token to end it.
        forwarder.ws(req, socket, head, route, log, (upstream) => {
          if (principal !== undefined) live?.track(socket, upstream, principal.claims);
        });
      }, refuse);
  };

  /** The forward-auth listener (config `forwardAuth`): `/auth/verify` and nothing else. */
  const onForwardAuthRequest: Handler = (req, res) => {
    const begun = begin(req, res);
    if (begun === undefined) return;
    const { scope, fail, target } = begun;
    if (!isForwardAuthPath(target.path))
      return fail(new GatewayError('not_found', 'This listener serves /auth/verify only.'));
    scope.route = 'forward-auth';
    verify(req, res, scope, target).catch(fail);
  };

  return { onRequest, onUpgrade, onForwardAuthRequest };
}

/**
 * Logs and counts a refused upgrade: its reason and, once the token
 * verified, whom it refused (the upgrade path settles on its own: there is
 * no response object to record).
 */
function upgradeRefused(
  log: Logger,
  metrics: Metrics,
  upgrade: { path: string; route: string; who: Who },
  err: unknown,
): void {
  const status = isGatewayError(err) ? err.status : 500;
  const settled = settledRefusal(status, isGatewayError(err) ? err : { code: 'internal_error' });
  metrics.upgrade(upgrade.route, settled.reason);
  if (settled.tokenRefusal !== undefined) metrics.tokenRefused(settled.tokenRefusal);
  log.info(
    {
      path: upgrade.path,
      route: upgrade.route,
      status,
      reason: settled.reason,
      tokenRefusal: settled.tokenRefusal,
      userId: upgrade.who.userId,
      tenantId: upgrade.who.tenantId,
      requestedTenant: settled.requestedTenant,
    },
    'upgrade refused',
  );
}

/** The admin listener: the ops endpoints and nothing else. */
export function createAdminRequestHandler(deps: {
  recorder: RequestRecorder;
  ops: NonNullable<DispatchDeps['ops']>;
}): Handler {
  return (req, res) => {
    const scope = openScope(req, res, deps.recorder);
    if (deps.ops(pathOf(req.url), req, res, scope)) return;
    sendError(
      res,
      new GatewayError('not_found', 'The admin listener serves /healthz, /readyz and /metrics.'),
    );
  };
}

/** Opens the request's scope (its outcome is recorded when the response closes); the request carries it. */
function openScope(req: IncomingMessage, res: ServerResponse, recorder: RequestRecorder) {
  const scope = recorder.open(req, res);
  (req as WithScope)[SCOPE] = scope;
  return scope;
}

function viewOf(req: IncomingMessage, target: NormalisedTarget): RequestView {
  return requestView(req.rawHeaders, target.path, target.query);
}

function urlOf(target: NormalisedTarget): string {
  return target.query === '' ? target.path : `${target.path}?${target.query}`;
}

/** The URL the upstream sees: the route's prefix stripped or rewritten, the query as sent. */
function forwardedUrl(route: CompiledRoute, target: NormalisedTarget): string {
  return urlOf({ ...target, path: upstreamPathOf(route, target.path) });
}

/** HTTP/1.0, or a line Node read as HTTP/0.9. */
function below11(req: IncomingMessage): boolean {
  return req.httpVersionMajor < 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor === 0);
}

function isApiPath(path: string): boolean {
  return path === '/1' || path.startsWith('/1/') || path.startsWith('/.well-known/');
}
