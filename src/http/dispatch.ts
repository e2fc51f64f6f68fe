/**
 * The way a request travels, readable in one place:
 *
 *   socket → request id, access log, path normalisation
 *          → /healthz, /readyz, /metrics → ops (only with listen.opsEndpoints; else admin listener only)
 *          → /1/..., /.well-known/...    → CORS (top-level `cors`) → Koa api (Basic or Bearer)
 *          → /auth/verify                → verdict only (forward-auth)
 *          → a route (host, then prefix) → CORS preflight answered, or the verdict
 *                                          (framing → tenant checks → anonymous? → admit
 *                                          → rate limit) → rewrite headers → forward
 *          → nothing                     → 404
 *
 * Upgrade (WebSocket) requests take the same path. What admits a request is
 * decided in one place, `proxy/decide/pipeline.ts`, for the three entry ways
 * alike (`proxy/entry-http.ts`, `entry-upgrade.ts`, `entry-verify.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { watchBodyIdle } from './body-idle.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { RequestRecorder } from '../ops/request-recorder.js';
import type { Admit } from '../proxy/decide/admit.js';
import type { Cors } from '../proxy/decide/cors.js';
import type { HeaderPolicy } from '../proxy/decide/header-policy.js';
import type { RequestOrigin } from '../proxy/decide/request-origin.js';
import { normaliseTarget, type NormalisedTarget } from '../proxy/decide/normalise-path.js';
import { urlOf } from '../proxy/decide/pipeline.js';
import type { RouteRateLimits } from '../proxy/rate-limits/route-rate-limits.js';
import type { RouteTable } from '../proxy/decide/route-table.js';
import type { CompiledRoute } from '../proxy/decide/routes.js';
import { checkTransferCoding } from '../proxy/decide/transfer-coding.js';
import { isForwardAuthPath } from '../proxy/decide/verify-request.js';
import { forwardRequest } from '../proxy/entry-http.js';
import { handleUpgrade } from '../proxy/entry-upgrade.js';
import { verifyRequest } from '../proxy/entry-verify.js';
import type { Forwarder } from '../proxy/forward/forwarder.js';
import type { LiveWebSockets } from '../proxy/forward/live-websockets.js';
import { pathOf } from '../ops/access-log.js';
import { http2RefusalOf } from './http2-request.js';
import { sendError, sendUpgradeError } from './respond.js';
import type { RequestScope } from './scope.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What a config reload may change while requests are in flight. */
export interface ProxySettings {
  routes: RouteTable<CompiledRoute>;
  headers: HeaderPolicy;
  /** The origin a request is addressed to (the CSRF rule of session-admitted requests). */
  origin: RequestOrigin;
  /** CORS of the identity endpoints (config `cors`). */
  apiCors: Cors | undefined;
}

export interface DispatchDeps {
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
  return {
    onRequest: ((req, res) => onRequest(deps, req, res)) satisfies Handler,
    onUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      if (!asksForH2c(req)) return handleUpgrade(deps, req, socket, head);
      sendUpgradeError(req, socket, H2C_UPGRADE, deps.recorder.openUpgrade(req, socket));
    },
    /** The forward-auth listener (config `forwardAuth`): `/auth/verify` and nothing else. */
    onForwardAuthRequest: ((req, res) => onForwardAuthRequest(deps, req, res)) satisfies Handler,
  };
}

/** The main listener: ops, the api, forward-auth, a route, or 404. */
function onRequest(deps: DispatchDeps, req: IncomingMessage, res: ServerResponse): void {
  const begun = begin(deps, req, res);
  if (begun === undefined) return;
  const { scope, fail, target } = begun;
  if (deps.ops?.(target.path, req, res, scope)) return;
  if (isApiPath(target.path)) return api(deps, req, res, scope, fail, target);
  if (deps.forwardAuthHere && isForwardAuthPath(target.path)) {
    scope.route = 'forward-auth';
    return void verifyRequest(deps, req, res, scope, target).catch(fail);
  }
  try {
    forwardRequest(deps, req, res, scope, target)?.catch(fail);
  } catch (err) {
    fail(err);
  }
}

function onForwardAuthRequest(deps: DispatchDeps, req: IncomingMessage, res: ServerResponse) {
  const begun = begin(deps, req, res);
  if (begun === undefined) return;
  const { scope, fail, target } = begun;
  if (!isForwardAuthPath(target.path))
    return fail(new GatewayError('not_found', 'This listener serves /auth/verify only.'));
  scope.route = 'forward-auth';
  verifyRequest(deps, req, res, scope, target).catch(fail);
}

/** The identity endpoints (Koa), behind the top-level CORS policy. */
function api(
  deps: DispatchDeps,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  fail: (err: unknown) => void,
  target: NormalisedTarget,
): void {
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
  req.url = urlOf(target.path, target.query);
  deps.api(req, res);
}

/**
 * Opens the request's scope and reads its target; undefined when the
 * request was already answered (refused) or must not be.
 */
function begin(deps: DispatchDeps, req: IncomingMessage, res: ServerResponse) {
  // An HTTP/2 stream's socket is its connection's, shared by its other streams.
  const connection = req.httpVersionMajor < 2 ? (req.socket as ClosingSocket | null) : null;
  // Pipelined behind a refusal that ends the connection: its framing is
  // suspect, and its answer would never be read. Never forwarded.
  if (connection?.[CLOSING] === true) return undefined;
  const scope = openScope(req, res, deps.recorder);
  if (req.headers['transfer-encoding'] !== undefined && below11(req)) {
    // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty
    // framing; the message is answered, then the connection closes, and
    // nothing pipelined behind it is read.
    res.shouldKeepAlive = false;
    (req.socket as ClosingSocket)[CLOSING] = true;
  }
  const fail = (err: unknown) => {
    if (!isGatewayError(err) || err.status >= 500) scope.log.warn({ err }, 'request failed');
    if (connection !== null && isGatewayError(err) && err.headers.connection === 'close')
      connection[CLOSING] = true;
    if (!res.headersSent) sendError(res, err);
  };
  watchBodyIdle(req, res, deps.bodyIdleMs, () => bodyStalled(deps.forwarder, res, fail));
  try {
    const refusal = protocolRefusal(req);
    if (refusal !== undefined) throw refusal;
    return { scope, fail, target: normaliseTarget(req.url) };
  } catch (err) {
    fail(err);
    return undefined;
  }
}

/**
 * The request body stopped arriving: 408, then the upstream request (if
 * any) is aborted. In that order: aborting destroys the request body, and
 * with it the connection the 408 must leave on. An answer already under
 * way is cut instead.
 */
function bodyStalled(forwarder: Forwarder, res: ServerResponse, fail: (err: unknown) => void) {
  if (res.headersSent) {
    forwarder.abandon(res);
    return;
  }
  fail(BODY_IDLE);
  res.once('finish', () => forwarder.abandon(res));
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

const H2C_UPGRADE = new GatewayError(
  'invalid_request',
  'Upgrade: h2c is not served (RFC 9113 §3.1 deprecates it): send HTTP/2 by prior knowledge, or over TLS.',
);

/**
 * What the edge refuses before any route is looked at: an HTTP/2 request
 * that cannot be read as an HTTP/1.1 one (`http2-request.ts`), and an
 * HTTP/1.1 request asking to switch to h2c, which is never switched to and
 * never passed upstream.
 */
function protocolRefusal(req: IncomingMessage): GatewayError | undefined {
  if (req.httpVersionMajor >= 2) return http2RefusalOf(req);
  return asksForH2c(req) ? H2C_UPGRADE : undefined;
}

/** `Upgrade` names h2c (RFC 7540 §3.2, removed by RFC 9113 §3.1). */
export function asksForH2c(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return upgrade !== undefined && /(^|[\s,])h2c\s*(,|$)/i.test(upgrade);
}

/** HTTP/1.0, or a line Node read as HTTP/0.9. */
function below11(req: IncomingMessage): boolean {
  return req.httpVersionMajor < 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor === 0);
}

function isApiPath(path: string): boolean {
  return path === '/1' || path.startsWith('/1/') || path.startsWith('/.well-known/');
}
