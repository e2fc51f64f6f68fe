/**
 * The wait a rate-limit 429 tells, from the bucket's state: refilling alone
 * (tokens missing ÷ rate), and leased (the shared bucket's tokens and debt,
 * the instances sharing it, the reconcile timer) — and the 429's headers
 * when more than one side refused. A real gateway whose clients obey the
 * answer: `rate-limits.redis.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { RateBucket } from '../../src/proxy/rate-limits/rate-bucket.js';
import { compileRateLimit, type RatePolicy } from '../../src/proxy/rate-limits/rate-policy.js';
import {
  secondsUntilToken,
  tooManyRequests,
  type ReconcileSchedule,
} from '../../src/proxy/rate-limits/rate-refusal.js';

const policyOf = (requestsPerSecond: number, burst: number): RatePolicy =>
  compileRateLimit('/r', { perTenant: { requestsPerSecond, burst } })!.policies[0]!;
const leased = (tokens: number) => new RateBucket(0, 1, 0, tokens);
/** Reconciles every 500 ms from 0, each answered in 5 ms. */
const every500: ReconcileSchedule = { lastTickAt: 0, intervalMs: 500, answerMs: 5 };

describe('refilling alone', () => {
  it('the tokens missing ÷ the rate, rounded up to the second, never 0', () => {
    const slow = policyOf(0.25, 1);
    expect(
      secondsUntilToken(slow, new RateBucket(0.25 / 1000, 1, 0, 0), undefined, every500, 0),
    ).toBe(4);
    // 0.3 of a token: 2.8 s.
    expect(
      secondsUntilToken(slow, new RateBucket(0.25 / 1000, 1, 0, 0.3), undefined, every500, 0),
    ).toBe(3);
    const fast = policyOf(1000, 10);
    expect(secondsUntilToken(fast, new RateBucket(1, 10, 0, 0.99), undefined, every500, 0)).toBe(1);
  });
});

describe('leased (a shared store)', () => {
  const slow = policyOf(0.25, 1);

  it('a slow refill: until the shared bucket holds the token (the bucket is forgotten here before then)', () => {
    // Alone, nothing held, the shared bucket empty: 1 token at 0.25/s.
    const lease = { instances: 1, shared: 0, at: 10 };
    expect(secondsUntilToken(slow, leased(0), lease, every500, 10)).toBe(4);
    // The same answer told 1.5 s later: 2.5 s left.
    expect(secondsUntilToken(slow, leased(0), lease, every500, 1510)).toBe(3);
  });

  it('pays the debt first, and waits for a fair share among the instances', () => {
    const two = policyOf(0.25, 2);
    // In debt by half a token, two instances: the shared bucket must reach 2 − 0.25 (held) tokens.
    const lease = { instances: 2, shared: -0.5, at: 0 };
    expect(secondsUntilToken(two, leased(0.25), lease, every500, 0)).toBe(9);
    // Three instances on a burst of 2: the most the shared bucket holds is 2 − held.
    expect(secondsUntilToken(two, leased(0), { instances: 3, shared: 0, at: 0 }, every500, 0)).toBe(
      8,
    );
  });

  it('a fast refill: the bucket is still here, and its token comes with the first reconcile after the refill', () => {
    const perSecond = policyOf(1, 1);
    // The token is shared at 1.0 s; the reconcile at 1.5 s brings it (its answer 5 ms later).
    expect(
      secondsUntilToken(perSecond, leased(0), { instances: 1, shared: 0, at: 0 }, every500, 0),
    ).toBe(2);
    // Every 2 s: the reconcile at 2 s brings what was shared at 0.1 s.
    const every2s = { lastTickAt: 0, intervalMs: 2000, answerMs: 5 };
    const fast = policyOf(10, 10);
    expect(secondsUntilToken(fast, leased(0), { instances: 1, shared: 0, at: 0 }, every2s, 0)).toBe(
      3,
    );
    expect(
      secondsUntilToken(fast, leased(0), { instances: 1, shared: 0, at: 0 }, every2s, 1000),
    ).toBe(2);
  });

  it('before its first answer: the next reconcile', () => {
    expect(secondsUntilToken(slow, leased(0), undefined, every500, 100)).toBe(1);
    const every2s = { lastTickAt: 0, intervalMs: 2000, answerMs: 5 };
    expect(secondsUntilToken(slow, leased(0), undefined, every2s, 100)).toBe(2);
  });
});

describe('the 429', () => {
  it('tells the longest wait of the sides that refused, and each side its own', () => {
    const limit = compileRateLimit('/r', {
      perTenant: { requestsPerSecond: 1, burst: 1 },
      perUser: { requestsPerSecond: 0.25, burst: 1 },
    })!;
    const [tenant, user] = limit.policies as [RatePolicy, RatePolicy];
    const err = tooManyRequests(limit, [
      { policy: tenant, seconds: 1 },
      { policy: user, seconds: 4 },
    ]);
    expect(err.code).toBe('too_many_requests');
    expect(err.headers).toEqual({
      'retry-after': '4',
      'ratelimit-policy': '"tenant";q=1;w=1, "user";q=1;w=4',
      ratelimit: '"tenant";r=0;t=1, "user";r=0;t=4',
    });
  });
});
