/**
 * The lease keeper alone, on fake time, with the store's lease calls as the
 * collaborator under the test's control: when the lease counts as fresh, and
 * that a lost lease empties the cache before it is trusted again.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { holdRevocationLease } from '../../src/auth/revocation/revocation-lease.js';
import type { RevocationLeases } from '../../src/store/types.js';

const LEASE_MS = 1000;

/** Lease calls that answer as told: renewed, a new lease, or a failure. */
function leasesAnswering() {
  const answers: ('renewed' | 'new' | 'down')[] = [];
  const calls = { hold: 0, release: 0 };
  const leases: RevocationLeases = {
    async hold() {
      calls.hold++;
      const answer = answers.shift() ?? 'renewed';
      if (answer === 'down') throw new Error('store down');
      return answer === 'renewed';
    },
    async release() {
      calls.release++;
    },
    requestConfirmation: async () => {},
    acknowledge: async () => {},
    unacknowledged: async () => 0,
    fenceUnacknowledged: async () => 0,
  };
  return { leases, answers, calls };
}

function listener() {
  const seen: string[] = [];
  return {
    seen,
    onNewLease: () => seen.push('new lease'),
    onFreshness: (fresh: boolean) => seen.push(fresh ? 'fresh' : 'stale'),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('holdRevocationLease', () => {
  it('is not fresh until the first hold answers; a first lease is a new one', async () => {
    const { leases, answers } = leasesAnswering();
    answers.push('new');
    const events = listener();
    const lease = holdRevocationLease(leases, LEASE_MS, events);
    expect(lease.fresh()).toBe(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(lease.fresh()).toBe(true);
    expect(events.seen).toEqual(['new lease', 'fresh']);
    await lease.release();
  });

  it('renews four times per lease and stays fresh while renewals answer', async () => {
    const { leases, calls } = leasesAnswering();
    const lease = holdRevocationLease(leases, LEASE_MS, listener());
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(LEASE_MS / 4);
      expect(lease.fresh()).toBe(true);
    }
    expect(calls.hold).toBe(21);
    await lease.release();
  });

  it('stops trusting at 90 % of the lease after the last renewal sent, when renewals fail', async () => {
    const { leases, answers } = leasesAnswering();
    const events = listener();
    const lease = holdRevocationLease(leases, LEASE_MS, events);
    await vi.advanceTimersByTimeAsync(0); // renewed at t=0
    answers.push('down', 'down', 'down', 'down', 'down');
    await vi.advanceTimersByTimeAsync(0.9 * LEASE_MS - 1);
    expect(lease.fresh()).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.fresh()).toBe(false);
    // Noticed at the next renewal tick at the latest (for open WebSockets).
    await vi.advanceTimersByTimeAsync(LEASE_MS / 4);
    expect(events.seen.at(-1)).toBe('stale');
    await lease.release();
  });

  it('a lease found gone (fenced) goes stale and empties the cache before it is fresh again', async () => {
    const { leases, answers } = leasesAnswering();
    const events = listener();
    const lease = holdRevocationLease(leases, LEASE_MS, events);
    await vi.advanceTimersByTimeAsync(0);
    events.seen.length = 0;
    answers.push('new');
    await vi.advanceTimersByTimeAsync(LEASE_MS / 4);
    expect(events.seen).toEqual(['stale', 'new lease', 'fresh']);
    expect(lease.fresh()).toBe(true);
    await lease.release();
  });

  it('a renewal answered late counts from when it was sent', async () => {
    const { leases } = leasesAnswering();
    let answer: (() => void) | undefined;
    const slow: RevocationLeases = {
      ...leases,
      hold: () =>
        new Promise<boolean>((resolve) => {
          answer = () => resolve(true);
        }),
    };
    const lease = holdRevocationLease(slow, LEASE_MS, listener());
    await vi.advanceTimersByTimeAsync(0.95 * LEASE_MS);
    answer?.();
    await vi.advanceTimersByTimeAsync(0);
    // Sent at t=0, answered at 0.95 leases: already past the trusted 90 %.
    expect(lease.fresh()).toBe(false);
    await lease.release();
  });

  it('release gives the lease up and stops renewing', async () => {
    const { leases, calls } = leasesAnswering();
    const lease = holdRevocationLease(leases, LEASE_MS, listener());
    await vi.advanceTimersByTimeAsync(0);
    await lease.release();
    expect(lease.fresh()).toBe(false);
    expect(calls.release).toBe(1);
    const holds = calls.hold;
    await vi.advanceTimersByTimeAsync(5 * LEASE_MS);
    expect(calls.hold).toBe(holds);
  });
});
