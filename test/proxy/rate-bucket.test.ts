/**
 * The in-process token bucket on a fake clock: refill, cap, Retry-After,
 * the switch between refilling alone and being fed by leases.
 */
import { describe, expect, it } from 'vitest';
import { RateBucket } from '../../src/proxy/rate-bucket.js';

describe('RateBucket', () => {
  it('starts full, gives its burst, then refills at its rate up to its capacity', () => {
    const bucket = new RateBucket(10 / 1000, 20, 0);
    let admitted = 0;
    while (bucket.available(0) >= 1) {
      bucket.take();
      admitted++;
    }
    expect(admitted).toBe(20);
    expect(bucket.available(99)).toBeLessThan(1);
    expect(bucket.available(100)).toBeCloseTo(1);
    expect(bucket.available(60_000)).toBe(20);
    expect(bucket.taken).toBe(20);
  });

  it('tells whole seconds, at least 1, until a token is back', () => {
    const slow = new RateBucket(0.5 / 1000, 1, 0, 0);
    expect(slow.retryAfterSeconds(250)).toBe(2);
    const fast = new RateBucket(100 / 1000, 1, 0, 0);
    expect(fast.retryAfterSeconds(250)).toBe(1);
    // Leased: the next reconcile may bring tokens.
    const leased = new RateBucket(0, 1, 0, 0);
    expect(leased.retryAfterSeconds(2500)).toBe(3);
  });

  it('fed by leases it does not refill by itself; alone again it refills from what it has', () => {
    const bucket = new RateBucket(0, 20, 0, 0);
    bucket.lease(5, 0);
    expect(bucket.available(10_000)).toBe(5);
    bucket.refillAlone(1 / 1000, 10, 10_000);
    expect(bucket.available(11_000)).toBeCloseTo(6);
    expect(bucket.available(100_000)).toBe(10);
    expect(bucket.full(100_000)).toBe(true);
  });

  it('is never full while leased (forgetting it would drop what it holds)', () => {
    const bucket = new RateBucket(0, 1, 0, 5);
    expect(bucket.full(1_000_000)).toBe(false);
  });
});
