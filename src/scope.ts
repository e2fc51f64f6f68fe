/**
 * The per-request scope: opened by the dispatcher for every request, filled
 * in by whichever part handles it, and read once at the end for the access
 * log line and the metrics.
 */
import type { Logger } from 'pino';
import type { ErrorCode } from './errors.js';

export interface RequestScope {
  requestId: string;
  /** The logger of this request (its lines carry `requestId`). */
  readonly log: Logger;
  /** What handled it: a route prefix, `api`, `forward-auth`, `admin` or `none`. */
  route: string;
  /** Who, once authenticated. */
  userId?: string;
  tenantId?: string;
  /** The CODE of the error answered, if any. */
  refusal?: ErrorCode;
  /** Time to the upstream's response headers, for proxied requests. */
  upstreamMs?: number;
}
