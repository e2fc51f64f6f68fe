/**
 * Opens each request's scope and, when the request ends, settles it into
 * the one outcome record (`outcome.ts`) that the metrics and the access log
 * line are both read from, so the two can never disagree (a 502 counted as
 * accepted in one and failed in the other, a cut upload counted twice).
 * WebSocket upgrades too: one line shape, one metric path; an upgrade ends
 * when its exchange does (see {@link UpgradeScope}), its line says
 * `"msg":"upgrade"` (accepted) or `"msg":"upgrade refused"` (not).
 * Envoy's gRPC ext_authz checks too (see {@link CheckScope}): recorded as
 * `/auth/verify`'s requests are, under the route `ext-authz`.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { takeRequestId } from '../http/request-id.js';
import { identifyResponse } from '../http/response-request-id.js';
import type { CheckScope, RequestScope, RequestTrace, UpgradeScope } from '../http/scope.js';
import { createAccessLog, pathOf, type AccessLog, type OriginalRequest } from './access-log.js';
import type { Metrics } from './metrics.js';
import { streamCounters } from '../http/http2-response.js';
import {
  CLIENT_CLOSED_STATUS,
  methodLabel,
  settle,
  settledRefusal,
  type Settled,
} from './outcome.js';
import { traceOf } from './trace-of.js';

export interface RecorderDeps {
  log: Logger;
  metrics: Metrics;
  /**
   * The client's address as the trusted-proxy rules resolve it, from the
   * connection's peer (a function: a reload changes the rules).
   */
  clientIp: (peer: string | undefined, req: IncomingMessage) => string;
  /** For a forward-auth line: the request the ingress asked about. */
  originalRequest: (req: IncomingMessage, path: string) => OriginalRequest;
  /**
   * The level of the access log lines: `debug` for the admin listener, whose
   * probes and scrapes would write a line every few seconds.
   */
  level: 'info' | 'debug';
}

export interface RequestRecorder {
  /** Opens the request's scope; the record is written when `res` closes. */
  open(req: IncomingMessage, res: ServerResponse): RequestScope;
  /** Opens a WebSocket upgrade's scope; the record is written when its exchange ends. */
  openUpgrade(req: IncomingMessage, socket: Duplex): UpgradeScope;
  /**
   * Opens an ext_authz check's scope, `req` the request Envoy asks about as
   * `/auth/verify` would read it; the record is written by its `end`.
   */
  openCheck(req: IncomingMessage): CheckScope;
  /** Requests (upgrades included) whose record has not been written yet. */
  inFlight(): number;
}

export function createRequestRecorder(deps: RecorderDeps): RequestRecorder {
  return new Recorder(deps);
}

/** The scope rides on the response (or the upgrade's socket): shared listeners find it without a closure. */
const SCOPE = Symbol('tenant-gateway.recorded-scope');
type Carrying = { [SCOPE]?: Scope };

class Recorder implements RequestRecorder {
  readonly access: AccessLog;
  private pending = 0;

  constructor(readonly deps: RecorderDeps) {
    this.access = createAccessLog(deps.log);
  }

  inFlight(): number {
    return this.pending;
  }

  open(req: IncomingMessage, res: ServerResponse): RequestScope {
    this.pending++;
    const scope = new Scope(
      this,
      req,
      req.httpVersionMajor >= 2 ? streamCounters(res, req.socket.remoteAddress) : req.socket,
    );
    identifyResponse(res, scope.requestId);
    (res as ServerResponse & Carrying)[SCOPE] = scope;
    res.on('close', responseClosed);
    return scope;
  }

  openUpgrade(req: IncomingMessage, socket: Duplex): UpgradeScope {
    this.pending++;
    const scope = new UpgradeRecord(this, req, socket);
    (socket as Duplex & Carrying)[SCOPE] = scope;
    socket.on('close', upgradeSocketClosed);
    return scope;
  }

  openCheck(req: IncomingMessage): CheckScope {
    this.pending++;
    return new CheckRecord(this, req);
  }

  /** Writes the request's record; never throws (telemetry must not break a request's other handlers). */
  ended(scope: Scope, settled: Settled, upgrade: boolean): void {
    this.pending--;
    try {
      this.record(scope, settled, upgrade);
    } catch (err) {
      this.deps.log.error({ err }, 'recording a request failed');
    }
  }

  private record(scope: Scope, settled: Settled, upgrade: boolean): void {
    const { metrics, level } = this.deps;
    const req = scope.req;
    const durationMs = performance.now() - scope.started;
    const bytesIn = scope.bytesIn ?? bodyLength(req);
    const bytesOut = bytesQueued(scope.socket) - scope.writtenBefore;
    metrics.request({
      route: scope.route,
      method: methodLabel(req.method),
      status: settled.status,
      outcome: settled.outcome,
      reason: settled.reason,
      principal: scope.kind ?? 'none',
      seconds: durationMs / 1000,
      upstreamSeconds: scope.upstreamMs === undefined ? undefined : scope.upstreamMs / 1000,
      bytesIn,
      bytesOut,
      upgrade,
    });
    if (settled.tokenRefusal !== undefined) metrics.tokenRefused(settled.tokenRefusal);
    scope.trace?.finish({
      route: scope.route,
      status: settled.status,
      outcome: settled.outcome,
      reason: settled.reason,
      userId: scope.userId,
      tenantId: scope.tenantId,
    });
    // The line is built only when it will be written: the proxy path runs for every request.
    if (!this.access.enabled(level)) return;
    this.access.write(level, {
      req,
      url: scope.url,
      scope,
      settled,
      durationMs,
      bytesIn,
      bytesOut,
      clientIp: this.deps.clientIp(scope.socket.remoteAddress, req),
      original:
        scope.route === 'forward-auth' || scope.route === CHECK_ROUTE
          ? this.deps.originalRequest(req, pathOf(scope.url))
          : undefined,
      msg: upgrade ? (settled.outcome === 'accepted' ? 'upgrade' : 'upgrade refused') : 'request',
    });
  }
}

function responseClosed(this: ServerResponse & Carrying): void {
  const scope = this[SCOPE] as Scope;
  scope.recorder.ended(scope, settle(scope, this), false);
}

/** A body the gateway did not count itself (its own endpoints): its length, once read whole. */
function bodyLength(req: IncomingMessage): number {
  const length = req.headers['content-length'];
  return length === undefined || !req.complete ? 0 : Number(length) || 0;
}

/** The socket's counters, as `net.Socket` has them (an upgrade's socket is typed a `Duplex`). */
type CountedSocket = {
  readonly bytesWritten: number;
  readonly writableLength?: number;
  readonly remoteAddress?: string | undefined;
};

/**
 * What the socket has been given to send so far: `net.Socket`'s
 * `bytesWritten` — the bytes handed to the kernel (`_bytesDispatched`) and
 * those still queued — without the getter's copy of the write queue to sum
 * it (~0.6k instructions a read, two reads a request: issue 35). A queued
 * string counts its length, which is its size in bytes for Node's heads
 * (latin1) and the gateway's own ASCII bodies; and a finished answer has
 * nothing queued (`finish` waits for the last write). A socket without the
 * field (another Duplex) is asked for `bytesWritten`.
 */
function bytesQueued(socket: CountedSocket): number {
  const dispatched = (socket as { _bytesDispatched?: unknown })._bytesDispatched;
  return typeof dispatched === 'number'
    ? dispatched + (socket.writableLength ?? 0)
    : socket.bytesWritten;
}

/** A scope whose child logger is made on first use: most requests never log. */
class Scope implements RequestScope {
  route = 'none';
  userId?: string;
  tenantId?: string;
  kind?: RequestScope['kind'];
  refusal?: RequestScope['refusal'];
  upstreamMs?: number;
  upstreamStatus?: number;
  upstreamBroke?: boolean;
  bytesIn?: number;
  readonly requestId: string;
  readonly trace: RequestTrace | undefined;
  readonly started = performance.now();
  /** As it arrived: the dispatcher rewrites `req.url` for the upstream. */
  readonly url: string | undefined;
  /** Kept here: undici takes `req.socket` once it has read the body. */
  readonly socket: CountedSocket;
  readonly writtenBefore: number;
  #log: Logger | undefined;

  constructor(
    readonly recorder: Recorder,
    readonly req: IncomingMessage,
    socket: CountedSocket,
  ) {
    this.requestId = takeRequestId(req);
    this.trace = traceOf(req);
    this.url = req.url;
    this.socket = socket;
    this.writtenBefore = bytesQueued(socket);
  }

  get log(): Logger {
    return (this.#log ??= this.recorder.deps.log.child(
      this.trace === undefined
        ? { requestId: this.requestId }
        : { requestId: this.requestId, traceId: this.trace.traceId },
    ));
  }
}

/** The upstream's `101` reached the client. */
const SWITCHED: Settled = { status: 101, outcome: 'accepted', reason: '' };
/** The client left before an answer began. */
const CLIENT_LEFT: Settled = {
  status: CLIENT_CLOSED_STATUS,
  outcome: 'failed',
  reason: 'client_closed',
};

class UpgradeRecord extends Scope implements UpgradeScope {
  /** The HTTP answer on the socket, once one began. */
  answer: ServerResponse | undefined = undefined;
  #ended = false;

  constructor(recorder: Recorder, req: IncomingMessage, socket: Duplex) {
    super(recorder, req, socket as Duplex & CountedSocket);
  }

  answered(res: ServerResponse): void {
    this.answer = res;
    (res as ServerResponse & Carrying)[SCOPE] = this;
    res.on('finish', answerFinished);
  }

  switched(): void {
    this.end(SWITCHED);
  }

  end(settled: Settled): void {
    if (this.#ended) return;
    this.#ended = true;
    this.recorder.ended(this, settled, true);
  }
}

function answerFinished(this: ServerResponse & Carrying): void {
  const scope = this[SCOPE] as UpgradeRecord;
  scope.end(settle(scope, this));
}

/** The socket closed: an answer cut short, or none begun (the client left). */
function upgradeSocketClosed(this: Duplex & Carrying): void {
  const scope = this[SCOPE] as UpgradeRecord;
  scope.end(scope.answer === undefined ? CLIENT_LEFT : settle(scope, scope.answer));
}

/** The route label of Envoy's gRPC ext_authz checks (beside `forward-auth`, `/auth/verify`'s). */
export const CHECK_ROUTE = 'ext-authz';

/** No bytes of the request Envoy asks about pass through the gateway: its counters stay 0. */
class CheckRecord extends Scope implements CheckScope {
  #ended = false;

  constructor(recorder: Recorder, req: IncomingMessage) {
    super(recorder, req, { bytesWritten: 0, remoteAddress: req.socket?.remoteAddress });
    this.route = CHECK_ROUTE;
  }

  end(status: number): void {
    if (this.#ended) return;
    this.#ended = true;
    const settled: Settled =
      this.refusal === undefined
        ? { status, outcome: 'accepted', reason: '' }
        : settledRefusal(status, this.refusal);
    this.recorder.ended(this, settled, false);
  }
}
