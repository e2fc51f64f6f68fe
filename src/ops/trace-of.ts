/**
 * A request's trace, carried on the request itself. Apart from `tracing.ts`
 * (the OpenTelemetry SDK, loaded only when `tracing.enabled`): the request
 * path reads a request's trace whether tracing is on or not, and must not
 * load the SDK to find that there is none.
 */
import type { IncomingMessage } from 'node:http';
import type { RequestTrace } from '../http/scope.js';

/** The trace of `req`, set by `Tracing.handle`. */
const TRACE = Symbol('tenant-gateway.trace');
type Traced = IncomingMessage & { [TRACE]?: RequestTrace };

export function traceOf(req: IncomingMessage): RequestTrace | undefined {
  return (req as Traced)[TRACE];
}

/** Sets `req`'s trace (`Tracing.handle`, once per request). */
export function setTraceOf(req: IncomingMessage, trace: RequestTrace): void {
  (req as Traced)[TRACE] = trace;
}
