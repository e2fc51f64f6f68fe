/**
 * Opens each request's scope and, when its response closes, settles it into
 * the one outcome record (`outcome.ts`) that the metrics and the access log
 * line are both read from, so the two can never disagree (a 502 counted as
 * accepted in one and failed in the other, a cut upload counted twice).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { REQUEST_ID_HEADER, takeRequestId } from '../request-id.js';
import type { RequestScope, RequestTrace } from '../scope.js';
import { createAccessLog, pathOf, type OriginalRequest } from './access-log.js';
import type { Metrics } from './metrics.js';
import { methodLabel, settle } from './outcome.js';
import { traceOf } from './tracing.js';

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
  /** Requests whose response has not closed yet. */
  inFlight(): number;
}

export function createRequestRecorder(deps: RecorderDeps): RequestRecorder {
  const { metrics, level } = deps;
  const access = createAccessLog(deps.log);
  let open = 0;

  return {
    inFlight: () => open,
    open(req, res) {
      open++;
      const requestId = takeRequestId(req);
      const scope = new Scope(requestId, deps.log, traceOf(req));
      res.setHeader(REQUEST_ID_HEADER, requestId);
      const started = performance.now();
      const url = req.url;
      // undici takes `req.socket` once it has read the body: kept here.
      const socket = req.socket;
      const writtenBefore = socket.bytesWritten;
      res.once('close', () => {
        open--;
        try {
          record();
        } catch (err) {
          // Telemetry must never break a request's other close handlers (its upstream slot).
          deps.log.error({ err }, 'recording a request failed');
        }
      });
      const record = () => {
        const settled = settle(scope, res);
        const durationMs = performance.now() - started;
        const bytesIn = scope.bytesIn ?? bodyLength(req);
        const bytesOut = socket.bytesWritten - writtenBefore;
        metrics.request({
          route: scope.route,
          method: methodLabel(req.method),
          status: settled.status,
          outcome: settled.outcome,
          reason: settled.reason,
          seconds: durationMs / 1000,
          upstreamSeconds: scope.upstreamMs === undefined ? undefined : scope.upstreamMs / 1000,
          bytesIn,
          bytesOut,
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
        if (!access.enabled(level)) return;
        access.write(level, {
          req,
          url,
          scope,
          settled,
          durationMs,
          bytesIn,
          bytesOut,
          clientIp: deps.clientIp(socket.remoteAddress, req),
          original:
            scope.route === 'forward-auth' ? deps.originalRequest(req, pathOf(url)) : undefined,
        });
      };
      return scope;
    },
  };
}

/** A body the gateway did not count itself (its own endpoints): its length, once read whole. */
function bodyLength(req: IncomingMessage): number {
  const length = req.headers['content-length'];
  return length === undefined || !req.complete ? 0 : Number(length) || 0;
}

/** A scope whose child logger is made on first use: most requests never log. */
class Scope implements RequestScope {
  route = 'none';
  userId?: string;
  tenantId?: string;
  refusal?: RequestScope['refusal'];
  upstreamMs?: number;
  upstreamStatus?: number;
  upstreamBroke?: boolean;
  bytesIn?: number;
  #log: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
    readonly trace: RequestTrace | undefined,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.base.child(
      this.trace === undefined
        ? { requestId: this.requestId }
        : { requestId: this.requestId, traceId: this.trace.traceId },
    ));
  }
}
