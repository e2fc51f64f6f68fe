/**
 * The in-process token bucket on a fake clock: refill, cap, the wait for a token,
 * the switch between refilling alone and being fed by leases.
 */
import { describe, expect, it } from 'vitest';
import { RateBucket } from '../../src/proxy/rate-limits/rate-bucket.js';

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

  it('tells the milliseconds until a token is back by its own refill', () => {
    const slow = new RateBucket(0.25 / 1000, 1, 0, 0);
    expect(slow.msUntilToken(0)).toBe(4000);
    expect(slow.msUntilToken(1000)).toBeCloseTo(3000);
    expect(slow.msUntilToken(4000)).toBe(0);
    const fast = new RateBucket(100 / 1000, 1, 0, 0.5);
    expect(fast.msUntilToken(0)).toBeCloseTo(5);
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
