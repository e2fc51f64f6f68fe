/**
 * The 429 a route's rate limit answers, and how long it tells the client to
 * wait: the time until a request would be admitted, in whole seconds rounded
 * up (never 0), the same in `Retry-After` and in the `RateLimit` field's `t`
 * (draft-ietf-httpapi-ratelimit-headers-11).
 */
import { GatewayError } from '../../errors.js';
import type { RateBucket } from './rate-bucket.js';
import type { RatePolicy, RouteRateLimit } from './rate-policy.js';

/** What the last reconcile said of a leased bucket (`at`: this instance's clock, its answer back). */
export interface LastLease {
  /** Instances taking part, this one included. */
  instances: number;
  /** Tokens no instance held after that reconcile; below 0 while the bucket pays a debt. */
  shared: number;
  at: number;
}

/** When this instance's reconciles run (its own clock). */
export interface ReconcileSchedule {
  /** When the reconcile timer last fired. */
  lastTickAt: number;
  intervalMs: number;
  /** How long the last reconcile took to get its answer back. */
  answerMs: number;
}

/** One side that refused: its policy and the seconds until it has a token for the client. */
export interface Refusal {
  policy: RatePolicy;
  seconds: number;
}

/** Past the reconcile's answer: a timer may fire late on a busy event loop. */
const LATE_TIMER_MS = 50;

/**
 * Whole seconds (at least 1) until `bucket` has a token for a client that
 * waits that long and sends nothing meanwhile (others sharing the bucket may
 * take the token first: no answer can promise it them).
 *
 * Refilling alone (the memory store, or a store out of reach): the tokens
 * missing ÷ its rate. Leased: until the shared bucket holds this instance's
 * fair share of a token (see {@link msUntilGranted}).
 */
export function secondsUntilToken(
  policy: RatePolicy,
  bucket: RateBucket,
  lease: LastLease | undefined,
  schedule: ReconcileSchedule,
  at: number,
): number {
  const ms =
    bucket.ratePerMs > 0
      ? bucket.msUntilToken(at)
      : msUntilGranted(policy, bucket, lease, schedule, at);
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * A leased bucket's wait. A share is everything in play ÷ the instances
 * taking part, so the shared bucket must hold `instances − held` tokens
 * (at most `burst − held`: the most it can hold); what other instances hold
 * is counted for them, never for this one, and the last answer is dated when
 * it came back (after Redis's clock read it), so the wait is never shorter
 * than the truth as that answer saw it. When that moment comes:
 *
 * - after this bucket is forgotten here (idle at the second tick of the
 *   reconcile timer from now: the refusal counts as use at the first), the
 *   client's next request starts a new bucket, which has its token at once
 *   (given itself while the shared bucket was last seen holding one, or
 *   granted by its first lease): the wait is that moment;
 * - before (a fast refill), the bucket is still here and gets its token from
 *   a reconcile: the first tick from that moment, plus its answer.
 */
function msUntilGranted(
  policy: RatePolicy,
  bucket: RateBucket,
  lease: LastLease | undefined,
  schedule: ReconcileSchedule,
  at: number,
): number {
  const { lastTickAt, intervalMs, answerMs } = schedule;
  const tickFrom = (t: number) =>
    lastTickAt + Math.max(1, Math.ceil((t - lastTickAt) / intervalMs)) * intervalMs;
  // No answer yet (a bucket new here, its first lease on its way): the next reconcile.
  if (lease === undefined) return tickFrom(at) + answerMs + LATE_TIMER_MS - at;
  const needed = Math.min(lease.instances, policy.burst) - bucket.tokens - lease.shared;
  const due = lease.at + (Math.max(0, needed) * 1000) / policy.ratePerSecond;
  const forgotten = tickFrom(at) + intervalMs + LATE_TIMER_MS;
  if (due >= forgotten) return due - at;
  return tickFrom(due) + answerMs + LATE_TIMER_MS - at;
}

/**
 * The 429 for the sides that refused (each side that had no token, so that
 * a client waiting `Retry-After` finds every one of them refilled): the
 * longest wait in `Retry-After`, each side's own in `RateLimit`.
 */
export function tooManyRequests(
  limit: RouteRateLimit,
  refused: readonly [Refusal, ...Refusal[]],
): GatewayError {
  const seconds = Math.max(...refused.map((r) => r.seconds));
  const { policy } = refused[0];
  return new GatewayError(
    'too_many_requests',
    `This ${policy.limit} sends more than ${policy.ratePerSecond} requests per second to this route; retry after ${seconds} s.`,
    {
      headers: {
        'retry-after': String(seconds),
        'ratelimit-policy': limit.policyHeader,
        ratelimit: refused.map((r) => `"${r.policy.limit}";r=0;t=${r.seconds}`).join(', '),
      },
    },
  );
}
