/**
 * The one outcome record of a request: the
 * status the client saw, whether the gateway let the request through, refused
 * it or failed it, and why. Made once, when the response closes; the request
 * counter, the histograms and the access log line are all read from it, so
 * they cannot disagree.
 */
import type { ServerResponse } from 'node:http';
import type { RequestScope } from '../scope.js';
import type { ErrorCode } from '../errors.js';
import { answeredError } from '../respond.js';

/**
 * - `accepted`: let through and answered completely (whatever status the
 *   upstream chose), or a gateway endpoint's own answer;
 * - `refused`: a 4xx the gateway made (bad token, tenant mismatch, 429 …);
 * - `failed`: a 5xx the gateway made (502, 503, 504, 500), or a transfer
 *   that was cut (the upstream broke mid-response, or the client left).
 */
export type Outcome = 'accepted' | 'refused' | 'failed';

/** `''` when accepted; else the error CODE, or how a transfer was cut. */
export type OutcomeReason = ErrorCode | 'upstream_broke' | 'client_closed' | '';

/** nginx's status for a request whose client left before the answer was complete. */
export const CLIENT_CLOSED_STATUS = 499;

export interface Settled {
  /** What the client saw; 499 when it left before a complete answer. */
  status: number;
  outcome: Outcome;
  reason: OutcomeReason;
}

/** How a request ended, read from its scope and its closed response. */
export function settle(scope: RequestScope, res: ServerResponse): Settled {
  const answered = answeredError(res);
  if (answered?.raw !== undefined) return refusedOrFailed(answered.raw, answered.code);
  if (!res.writableFinished) {
    // Cut: the client never saw a complete answer.
    if (scope.upstreamBroke === true) {
      return { status: res.statusCode, outcome: 'failed', reason: 'upstream_broke' };
    }
    if (res.headersSent) {
      return { status: res.statusCode, outcome: 'failed', reason: 'client_closed' };
    }
    return { status: CLIENT_CLOSED_STATUS, outcome: 'failed', reason: 'client_closed' };
  }
  const refusal = answered?.code ?? scope.refusal;
  if (refusal !== undefined) return refusedOrFailed(res.statusCode, refusal);
  return { status: res.statusCode, outcome: 'accepted', reason: '' };
}

function refusedOrFailed(status: number, reason: ErrorCode): Settled {
  return { status, outcome: status >= 500 ? 'failed' : 'refused', reason };
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The method as a metric label: a client can send any token, the label set stays bounded. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && METHODS.has(method) ? method : 'other';
}
