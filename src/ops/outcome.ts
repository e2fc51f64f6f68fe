/**
 * The one outcome record of a request: the
 * status the client saw, whether the gateway let the request through, refused
 * it or failed it, and why. Made once, when the response closes; the request
 * counter, the histograms and the access log line are all read from it, so
 * they cannot disagree.
 */
import type { ServerResponse } from 'node:http';
import { tokenRefusalOf, type TokenRefusal } from '../auth/tokens/token-refusals.js';
import type { Refusal, RequestScope } from '../http/scope.js';
import type { ErrorCode } from '../errors.js';
import { answeredError } from '../http/respond.js';

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
  /** `invalid_token`: why the token was refused (a bounded list). */
  tokenRefusal?: TokenRefusal;
  /**
   * `tenant_mismatch`, `tenant_access_denied`: the tenant the request named —
   * client input, as read, cut at 64 characters.
   */
  requestedTenant?: string;
}

/** How a request ended, read from its scope and its closed response. */
export function settle(scope: RequestScope, res: ServerResponse): Settled {
  const answered = answeredError(res);
  if (answered?.raw !== undefined) return settledRefusal(answered.raw, answered);
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
  const refusal = answered ?? scope.refusal;
  if (refusal !== undefined) return settledRefusal(res.statusCode, refusal);
  return { status: res.statusCode, outcome: 'accepted', reason: '' };
}

/**
 * A request answered with an error: refused (4xx) or failed (5xx), with
 * what the error's detail tells the log. For the upgrade path too, which
 * settles on its own.
 */
export function settledRefusal(status: number, refusal: Refusal): Settled {
  const settled: Settled = {
    status,
    outcome: status >= 500 ? 'failed' : 'refused',
    reason: refusal.code,
  };
  if (refusal.detail === undefined) return settled;
  const tokenRefusal = tokenRefusalOf(refusal);
  if (tokenRefusal !== undefined) settled.tokenRefusal = tokenRefusal;
  else if (NAMES_A_TENANT.has(refusal.code))
    settled.requestedTenant = refusal.detail.slice(0, MAX_REQUESTED_TENANT);
  return settled;
}

/** A tenant id is at most 63 characters (a DNS label): a named one is cut after 64. */
const MAX_REQUESTED_TENANT = 64;

/** The refusals whose detail is the tenant the request named. */
const NAMES_A_TENANT: ReadonlySet<ErrorCode> = new Set(['tenant_mismatch', 'tenant_access_denied']);

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The method as a metric label: a client can send any token, the label set stays bounded. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && METHODS.has(method) ? method : 'other';
}
