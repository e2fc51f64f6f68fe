/**
 * The per-request rate-limit decision, after authentication (the principal
 * names tenant and user) and before forwarding. Every bucket is held in
 * process (`rate-bucket.ts`): a request with its buckets here is decided
 * without a store call or an await. With a shared store, buckets are fed by
 * leases settled in the background every `reconcileIntervalMs`
 * (`store/redis-rate-leases.ts`). A bucket new to this instance admits one
 * request at once, charged to the shared bucket by its first lease (unless
 * the shared bucket was last seen in debt); more requests before that lease
 * wait for it. Without a shared store (the memory store), or while the store
 * cannot be reached, each bucket refills by itself, at this instance's last
 * known share of the rate.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/credentials/authenticate.js';
import type { RateLease, RateLeaseRequest, Store } from '../../store/types.js';
import { RateBucket } from './rate-bucket.js';
import type { RateLimitSide, RatePolicy, RouteRateLimit } from './rate-policy.js';
import {
  secondsUntilToken,
  tooManyRequests,
  type LastLease,
  type ReconcileSchedule,
  type Refusal,
} from './rate-refusal.js';

/**
 * Past this many buckets the oldest go first. Each needs a valid token for
 * its tenant or user, and idle ones go at every reconcile: this only bounds
 * a flood between two.
 */
const MAX_BUCKETS = 100_000;

/** Decisions since the last report, per route and side. */
export interface RateDecisions {
  route: string;
  limit: RateLimitSide;
  admitted: number;
  limited: number;
  /** Requests this side's bucket made wait for its first lease. */
  waited: number;
}

export interface RouteRateLimits {
  /**
   * Takes a token from each of the route's buckets for `principal`, or
   * throws 429 `too_many_requests` (taking none). A promise only when a
   * bucket new to this instance has no token left before its first lease
   * (its one token went to an earlier request, or the shared bucket was
   * last seen short), and waits for that lease.
   */
  take(limit: RouteRateLimit, principal: Principal): void | Promise<void>;
  /** The decisions since the last call, and resets them. */
  drainDecisions(): RateDecisions[];
  /** Buckets held now. */
  size(): number;
  /** Settles now (tests and the bench; the timer does it otherwise). */
  reconcile(): Promise<void>;
  /** Stops reconciling and gives back what this instance holds, so others need not wait to write it off. */
  close(): Promise<void>;
}

export interface RouteRateLimitDeps {
  /** The shared store's leases; undefined: buckets are this instance's alone. */
  leases: Store['leaseRates'];
  intervalMs: number;
  log: Logger;
  onReconcileFailure: () => void;
  now?: () => number;
}

/** The shared bucket as a reconcile last saw it (`at` on this instance's clock). */
interface SharedView {
  /** Tokens no instance holds; below 0 while the bucket pays a debt. */
  shared: number;
  at: number;
}

/** A policy's buckets, by tenant or user id, and its decisions since the last report. */
interface PolicyState {
  policy: RatePolicy;
  buckets: Map<string, RateBucket>;
  /**
   * Subjects whose bucket was forgotten here while the shared one was short
   * of a token: a new bucket for them admits nothing before its first lease
   * until the refill has brought one back.
   */
  short: Map<string, SharedView>;
  admitted: number;
  limited: number;
  waited: number;
}

/** What the last reconcile said of a bucket: the instances sharing it, and the shared tokens. */
const lastLeaseOf = new WeakMap<RateBucket, LastLease>();
/** How a new bucket's waiters are released. */
const releaseOf = new WeakMap<RateBucket, () => void>();

export function createRouteRateLimits(deps: RouteRateLimitDeps): RouteRateLimits {
  return new RouteBuckets(deps);
}

/** The buckets of every route's policies, and their reconcile with the shared store. */
class RouteBuckets implements RouteRateLimits {
  private readonly leases: Store['leaseRates'];
  private readonly now: () => number;
  private readonly states = new Map<string, PolicyState>();
  private readonly holder: { id: string; silentAfterMs: number };
  /** When reconciles run, for the wait a 429 tells. */
  private readonly schedule: ReconcileSchedule;
  /** Buckets whose reconcile is under way: never asked for twice at once. */
  private readonly settling = new WeakSet<RateBucket>();
  private readonly timer: NodeJS.Timeout;
  private held = 0;
  private ticking = false;
  private newSoon = false;

  constructor(private readonly deps: RouteRateLimitDeps) {
    const { intervalMs } = deps;
    this.leases = deps.leases;
    this.now = deps.now ?? (() => performance.now());
    this.holder = { id: randomUUID(), silentAfterMs: 4 * intervalMs };
    this.schedule = { lastTickAt: this.now(), intervalMs, answerMs: 0 };
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  take(limit: RouteRateLimit, principal: Principal): void | Promise<void> {
    const at = this.now();
    const { policies } = limit;
    let waiting: Promise<void>[] | undefined;
    for (const policy of policies) {
      const state = this.stateOf(policy);
      const bucket = this.bucketOf(state, subjectOf(policy, principal), at);
      if (bucket.ready !== undefined && bucket.available(at) < 1) {
        state.waited++;
        (waiting ??= []).push(bucket.ready);
      }
    }
    if (waiting !== undefined)
      return Promise.all(waiting).then(() => this.decide(limit, principal, this.now()));
    this.decide(limit, principal, at);
  }

  drainDecisions(): RateDecisions[] {
    const out: RateDecisions[] = [];
    for (const state of this.states.values()) {
      const { admitted, limited, waited } = state;
      if (admitted + limited + waited === 0) continue;
      const { route, limit } = state.policy;
      out.push({ route, limit, admitted, limited, waited });
      state.admitted = 0;
      state.limited = 0;
      state.waited = 0;
    }
    return out;
  }

  size(): number {
    return this.held;
  }

  reconcile(): Promise<void> {
    return this.settle(false);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.giveBack();
  }

  private tick(): void {
    this.schedule.lastTickAt = this.now();
    if (this.ticking) return;
    this.ticking = true;
    void this.settle(false).finally(() => (this.ticking = false));
  }

  /** Every bucket has a token: each gives one. Else each empty one refuses, none gives. */
  private decide(limit: RouteRateLimit, principal: Principal, at: number): void {
    const { policies } = limit;
    let refused: [Refusal, ...Refusal[]] | undefined;
    for (const policy of policies) {
      const state = this.stateOf(policy);
      const bucket = this.bucketOf(state, subjectOf(policy, principal), at);
      if (bucket.available(at) >= 1) continue;
      bucket.refused++;
      state.limited++;
      const lease = lastLeaseOf.get(bucket);
      const seconds = secondsUntilToken(policy, bucket, lease, this.schedule, at);
      const refusal = { policy, seconds };
      if (refused === undefined) refused = [refusal];
      else refused.push(refusal);
    }
    if (refused !== undefined) throw tooManyRequests(limit, refused);
    for (const policy of policies) {
      const state = this.stateOf(policy);
      (state.buckets.get(subjectOf(policy, principal)) as RateBucket).take();
      state.admitted++;
    }
  }

  private stateOf(policy: RatePolicy): PolicyState {
    let state = this.states.get(policy.key);
    if (state === undefined) {
      state = {
        policy,
        buckets: new Map(),
        short: new Map(),
        admitted: 0,
        limited: 0,
        waited: 0,
      };
      this.states.set(policy.key, state);
    }
    return state;
  }

  private bucketOf(state: PolicyState, subject: string, at: number): RateBucket {
    let bucket = state.buckets.get(subject);
    if (bucket !== undefined) return bucket;
    if (this.held >= MAX_BUCKETS) this.evictOldest(state, at);
    const { ratePerSecond, burst } = state.policy;
    if (this.leases === undefined) bucket = new RateBucket(ratePerSecond / 1000, burst, at);
    else {
      bucket = this.awaitingLease(new RateBucket(0, burst, at, 0));
      if (mayAdmitBeforeLease(state, subject, at)) bucket.tokens = bucket.uncharged = 1;
    }
    state.buckets.set(subject, bucket);
    this.held++;
    return bucket;
  }

  private awaitingLease(bucket: RateBucket): RateBucket {
    bucket.ready = new Promise((resolve) => releaseOf.set(bucket, resolve));
    if (!this.newSoon) {
      this.newSoon = true;
      setImmediate(() => {
        this.newSoon = false;
        void this.settle(true);
      });
    }
    return bucket;
  }

  private evictOldest(preferred: PolicyState, at: number): void {
    for (const state of [preferred, ...this.states.values()]) {
      const first = state.buckets.entries().next();
      if (first.done === true) continue;
      const [subject, bucket] = first.value;
      state.buckets.delete(subject);
      this.held--;
      forget(state, subject, lastSeen(bucket, at, false));
      // Its waiters decide now, on a bucket of their own (refused until it is leased).
      releaseOf.get(bucket)?.();
      return;
    }
  }

  /**
   * One reconcile: every bucket active since the last one (or new) asks for
   * its share, each idle one gives back what it holds and is forgotten.
   * `onlyNew`: just the buckets waiting for a first lease.
   */
  private async settle(onlyNew: boolean): Promise<void> {
    const at = this.now();
    const asking: Asking[] = [];
    for (const state of this.states.values()) this.collect(state, onlyNew, at, asking);
    const leases = this.leases;
    if (leases === undefined || asking.length === 0) return;
    const requests = asking.map((a) => a.request);
    let granted: (RateLease | undefined)[];
    try {
      granted = await leases(this.holder, requests);
    } catch (err) {
      this.deps.onReconcileFailure();
      this.deps.log.warn(
        { err },
        'rate limits: the store could not be reached; limiting in process',
      );
      granted = [];
    }
    const after = this.now();
    if (granted.length > 0) this.schedule.answerMs = after - at;
    asking.forEach(({ state, subject, bucket, request }, i) => {
      this.settling.delete(bucket);
      const lease = granted[i];
      if (!request.leaving) apply(bucket, request, lease, after);
      else if (lease !== undefined) forget(state, subject, { shared: lease.shared, at: after });
    });
  }

  /** A policy's turn in a reconcile: its buckets' lease requests into `asking`, idle ones forgotten. */
  private collect(state: PolicyState, onlyNew: boolean, at: number, asking: Asking[]): void {
    const { policy } = state;
    for (const [subject, bucket] of state.buckets) {
      const isNew = bucket.ready !== undefined;
      if ((onlyNew && !isNew) || this.settling.has(bucket)) continue;
      const active = isNew || bucket.taken + bucket.refused > 0;
      bucket.taken = 0;
      bucket.refused = 0;
      if (!active) {
        // Idle: a refilling bucket that is full again is as good as none.
        if (bucket.ratePerMs > 0 && !bucket.full(at)) continue;
        state.buckets.delete(subject);
        this.held--;
        forget(state, subject, lastSeen(bucket, at, true));
      }
      if (this.leases === undefined) continue;
      const request = leaseRequest(policy, subject, bucket, at, !active);
      asking.push({ state, subject, bucket, request });
      this.settling.add(bucket);
    }
    for (const [subject, seen] of state.short)
      if (refilled(policy, seen, at) >= 1) state.short.delete(subject);
    const { buckets, short, admitted, limited, waited } = state;
    if (buckets.size + short.size + admitted + limited + waited === 0)
      this.states.delete(policy.key);
  }

  /** Every bucket leaves (best effort: a holding not given back is written off later). */
  private async giveBack(): Promise<void> {
    if (this.leases === undefined) return;
    const at = this.now();
    const requests: RateLeaseRequest[] = [];
    for (const { policy, buckets } of this.states.values()) {
      for (const [subject, bucket] of buckets) {
        if (bucket.ready !== undefined) continue;
        requests.push(leaseRequest(policy, subject, bucket, at, true));
      }
    }
    this.states.clear();
    this.held = 0;
    if (requests.length > 0) await this.leases(this.holder, requests).catch(() => undefined);
  }
}

/** A bucket asking for its share in a reconcile. */
interface Asking {
  state: PolicyState;
  subject: string;
  bucket: RateBucket;
  request: RateLeaseRequest;
}

function subjectOf(policy: RatePolicy, principal: Principal): string {
  return policy.limit === 'tenant' ? principal.tenantId : principal.userId;
}

/**
 * Whether a bucket new here may admit one request before its first lease:
 * yes unless, when this instance last forgot it, the shared bucket was
 * short of a token that its refill has not brought back since.
 */
function mayAdmitBeforeLease(state: PolicyState, subject: string, at: number): boolean {
  const seen = state.short.get(subject);
  if (seen === undefined) return true;
  if (refilled(state.policy, seen, at) < 1) return false;
  state.short.delete(subject);
  return true;
}

/**
 * Remembers a forgotten bucket's shared tokens if they are short of one
 * (`seen` undefined: nothing learnt, what was remembered stays).
 */
function forget(state: PolicyState, subject: string, seen: SharedView | undefined): void {
  if (seen === undefined) return;
  state.short.delete(subject); // re-inserted last: the oldest go first
  if (seen.shared >= 1) return;
  state.short.set(subject, seen);
  const oldest = state.short.keys().next();
  if (state.short.size > MAX_BUCKETS && oldest.done !== true) state.short.delete(oldest.value);
}

/**
 * The shared tokens as this instance knows them when it forgets `bucket`:
 * as its last lease left them, less what it admitted uncharged, plus what
 * it holds when it gives that back (an idle bucket does, an evicted one not).
 */
function lastSeen(bucket: RateBucket, at: number, givesBack: boolean): SharedView | undefined {
  const seen = lastLeaseOf.get(bucket);
  if (seen === undefined && bucket.uncharged === 0) return undefined;
  const held = givesBack ? Math.max(0, bucket.available(at)) : 0;
  return { shared: (seen?.shared ?? 0) + held - bucket.uncharged, at: seen?.at ?? at };
}

/** A lease answered (or, `lease` undefined, the store did not): the bucket refilled by it. */
function apply(
  bucket: RateBucket,
  request: RateLeaseRequest,
  lease: RateLease | undefined,
  at: number,
): void {
  const isNew = bucket.ready !== undefined;
  if (lease === undefined) {
    // Alone until the store answers again, at this instance's last known share
    // (what it admitted before a lease comes out of that share, and is charged later).
    const instances = lastLeaseOf.get(bucket)?.instances ?? 1;
    const spent = isNew ? bucket.uncharged - bucket.tokens : 0;
    bucket.refillAlone(request.ratePerSecond / 1000 / instances, request.burst / instances, at);
    if (isNew) bucket.tokens = Math.max(0, bucket.capacity - spent);
  } else {
    lastLeaseOf.set(bucket, { instances: lease.instances, shared: lease.shared, at });
    bucket.uncharged -= request.charge;
    bucket.lease(lease.grant, at);
  }
  if (isNew) {
    bucket.ready = undefined;
    releaseOf.get(bucket)?.();
  }
}

/** A bucket's turn in a reconcile: what it still holds, and whether it leaves. */
function leaseRequest(
  policy: RatePolicy,
  subject: string,
  bucket: RateBucket,
  at: number,
  leaving: boolean,
): RateLeaseRequest {
  return {
    bucket: `${policy.key}:${encodeURIComponent(subject)}`,
    ratePerSecond: policy.ratePerSecond,
    burst: policy.burst,
    held: Math.max(0, bucket.available(at)),
    charge: bucket.uncharged,
    leaving,
  };
}

/** The shared tokens `seen` saw, refilled until `at` (never past `burst`). */
function refilled(policy: RatePolicy, seen: SharedView, at: number): number {
  return Math.min(policy.burst, seen.shared + ((at - seen.at) * policy.ratePerSecond) / 1000);
}
