/**
 * The lease a serving instance holds so that revokers wait for it (lease
 * mode, `revocation.mode: lease`). While the lease is fresh the instance may
 * answer from its session cache; once it cannot renew, it stops at the
 * lease's end, before the store considers the lease over — so a revoker that
 * waited out the lease knows the instance reads the store again.
 */
import { randomUUID } from 'node:crypto';
import type { RevocationLeases } from '../../store/types.js';

/**
 * The share of a lease the holder trusts itself with: it counts from when it
 * *sent* the renewal, on its own monotonic clock, and stops at 90 % of the
 * length, so its clock and the store's may run up to ~5 % apart in rate (real
 * clocks differ by a few parts per million) and still the holder stops first.
 */
const TRUSTED_SHARE = 0.9;
/** Renewals per lease length: a lost renewal or two does not end the lease. */
const RENEWALS_PER_LEASE = 4;

export interface RevocationLease {
  readonly holderId: string;
  /** Whether the lease is fresh now; read per request, so only a clock read. */
  fresh(): boolean;
  /** Gives the lease up, so that no revoker waits for this instance. */
  release(): Promise<void>;
}

export interface LeaseListener {
  /**
   * A new lease was taken where one was expected to be renewed: it had ended
   * or a revoker fenced it, so something may have been missed. Called before
   * the lease counts as fresh again: drop every cached verdict here.
   */
  onNewLease(): void;
  /** Freshness changed (noticed at the next renewal tick at the latest). */
  onFreshness(fresh: boolean): void;
}

export function holdRevocationLease(
  leases: RevocationLeases,
  ms: number,
  listener: LeaseListener,
): RevocationLease {
  const holderId = randomUUID();
  /** `performance.now()` until which the lease is trusted. */
  let until = 0;
  let wasFresh = false;
  let renewing = false;
  let released = false;
  // The global `performance`, not node:perf_hooks': the tests fake it.
  const fresh = (): boolean => performance.now() < until;
  const report = (): void => {
    const now = fresh();
    if (now === wasFresh) return;
    wasFresh = now;
    listener.onFreshness(now);
  };

  async function renew(): Promise<void> {
    if (renewing || released) return report();
    renewing = true;
    const sent = performance.now();
    try {
      const renewed = await leases.hold(holderId, ms);
      if (released) return;
      if (!renewed) {
        until = 0;
        report();
        listener.onNewLease();
      }
      until = sent + ms * TRUSTED_SHARE;
    } catch {
      // Not renewed: the lease runs out by itself, and the next tick tries again.
    } finally {
      renewing = false;
    }
    report();
  }

  const timer = setInterval(() => void renew(), ms / RENEWALS_PER_LEASE);
  timer.unref();
  void renew();

  return {
    holderId,
    fresh,
    async release() {
      released = true;
      clearInterval(timer);
      until = 0;
      report();
      await leases.release(holderId).catch(() => undefined);
    },
  };
}
