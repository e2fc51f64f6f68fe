/**
 * One token bucket held in process: the per-request decision reads and
 * writes plain numbers, never the store. Two ways to be fed:
 *
 * - refilling: `ratePerMs` tokens per millisecond up to `capacity` (the
 *   memory store; or a Redis store that cannot be reached, with this
 *   instance's last known share of the rate);
 * - leased: no refill of its own (`ratePerMs` 0); a reconcile adds what the
 *   shared bucket grants (`redis-rate-leases.ts`). Before its first grant it
 *   may hold one token it gave itself (`uncharged`).
 */
export class RateBucket {
  /** What is left; a request takes 1. */
  tokens: number;
  /** When `tokens` was last brought up to date (ms, any monotonic clock). */
  updatedAt: number;
  ratePerMs: number;
  capacity: number;
  /** Requests admitted since the last reconcile. */
  taken = 0;
  /** Requests refused since the last reconcile. */
  refused = 0;
  /** Resolves once a first lease arrived (a bucket new to this instance); undefined after. */
  ready: Promise<void> | undefined;
  /**
   * Tokens it gave itself before its first lease (a bucket new to this
   * instance admits one request at once), not yet charged to the shared
   * bucket: the next reconcile charges them.
   */
  uncharged = 0;

  constructor(ratePerMs: number, capacity: number, now: number, tokens = capacity) {
    this.ratePerMs = ratePerMs;
    this.capacity = capacity;
    this.tokens = tokens;
    this.updatedAt = now;
  }

  /** Brings `tokens` up to `now` and returns it. */
  available(now: number): number {
    if (this.ratePerMs > 0 && now > this.updatedAt) {
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.updatedAt) * this.ratePerMs);
    }
    this.updatedAt = Math.max(this.updatedAt, now);
    return this.tokens;
  }

  /** Takes one token; call after `available(now) >= 1`. */
  take(): void {
    this.tokens -= 1;
    this.taken += 1;
  }

  /** Milliseconds until a refilling bucket has one token (0 when it has one now). */
  msUntilToken(now: number): number {
    return Math.max(0, 1 - this.available(now)) / this.ratePerMs;
  }

  /** Refills by itself from now on (the store is out of reach, or there is none). */
  refillAlone(ratePerMs: number, capacity: number, now: number): void {
    this.available(now);
    this.ratePerMs = ratePerMs;
    this.capacity = capacity;
    this.tokens = Math.min(this.tokens, capacity);
  }

  /** Fed by leases from now on: what it holds stays, it no longer refills itself. */
  lease(grant: number, now: number): void {
    this.available(now);
    this.ratePerMs = 0;
    this.tokens += grant;
  }

  /** Whether a refilling bucket is full again: forgetting it changes nothing. */
  full(now: number): boolean {
    return this.ratePerMs > 0 && this.available(now) >= this.capacity;
  }
}
