/**
 * The per-request decision on a fake clock: both sides take a token or
 * neither does, the 429 it throws, idle buckets forgotten, a bucket new to
 * the instance admitting one request before its first lease (and none while
 * the shared bucket was last seen short), and limiting alone when the store
 * fails. The shared store's side is proved against a real Redis in
 * `rate-limits.redis.test.ts`.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/credentials/authenticate.js';
import { isGatewayError, type GatewayError } from '../../src/errors.js';
import {
  createRouteRateLimits,
  type RouteRateLimitDeps,
  type RouteRateLimits,
} from '../../src/proxy/rate-limits/route-rate-limits.js';
import { compileRateLimit, type RouteRateLimit } from '../../src/proxy/rate-limits/rate-policy.js';
import type { RateLeaseRequest } from '../../src/store/types.js';

const who = (tenantId: string, userId: string) => ({ tenantId, userId }) as Principal;

function limiter(leases: RouteRateLimitDeps['leases'] = undefined) {
  const clock = { ms: 0 };
  let failures = 0;
  const limits = createRouteRateLimits({
    leases,
    intervalMs: 60_000, // reconciles only when the test asks
    log: pino({ level: 'silent' }),
    onReconcileFailure: () => failures++,
    now: () => clock.ms,
  });
  return { limits, clock, failures: () => failures };
}

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    if (isGatewayError(err)) return err;
    throw err;
  }
  throw new Error('admitted');
}

const both = compileRateLimit('/api', {
  perTenant: { requestsPerSecond: 10, burst: 3 },
  perUser: { requestsPerSecond: 1, burst: 2 },
})!;

describe('in process (no shared store)', () => {
  it('takes a token from each side or from neither, and refuses with 429 and its headers', () => {
    const { limits, clock } = limiter();
    expect(limits.take(both, who('acme', 'alice'))).toBeUndefined();
    expect(limits.take(both, who('acme', 'alice'))).toBeUndefined();
    const err = refusal(() => limits.take(both, who('acme', 'alice')));
    expect(err.code).toBe('too_many_requests');
    expect(err.headers).toEqual({
      'retry-after': '1',
      'ratelimit-policy': '"tenant";q=10;w=1, "user";q=1;w=1',
      ratelimit: '"user";r=0;t=1',
    });
    // Alice's refusal took nothing from the tenant: Bob has its third token.
    expect(limits.take(both, who('acme', 'bob'))).toBeUndefined();
    expect(refusal(() => limits.take(both, who('acme', 'carol'))).headers.ratelimit).toBe(
      '"tenant";r=0;t=1',
    );
    clock.ms = 1000;
    expect(limits.take(both, who('acme', 'alice'))).toBeUndefined();
    expect(limits.drainDecisions()).toEqual([
      { route: '/api', limit: 'tenant', admitted: 4, limited: 1, waited: 0 },
      { route: '/api', limit: 'user', admitted: 4, limited: 1, waited: 0 },
    ]);
    expect(limits.drainDecisions()).toEqual([]);
    limits.close();
  });

  it('when both sides are empty, tells the longer wait in Retry-After and each side its own', () => {
    const { limits, clock } = limiter();
    const slowUser = compileRateLimit('/api', {
      perTenant: { requestsPerSecond: 1, burst: 1 },
      perUser: { requestsPerSecond: 0.25, burst: 1 },
    })!;
    limits.take(slowUser, who('acme', 'alice'));
    expect(refusal(() => limits.take(slowUser, who('acme', 'alice'))).headers).toEqual({
      'retry-after': '4',
      'ratelimit-policy': '"tenant";q=1;w=1, "user";q=1;w=4',
      ratelimit: '"tenant";r=0;t=1, "user";r=0;t=4',
    });
    expect(limits.drainDecisions()).toEqual([
      { route: '/api', limit: 'tenant', admitted: 1, limited: 1, waited: 0 },
      { route: '/api', limit: 'user', admitted: 1, limited: 1, waited: 0 },
    ]);
    // The tenant's token is back after 1 s, the user's only after 4.
    clock.ms = 1000;
    expect(refusal(() => limits.take(slowUser, who('acme', 'alice'))).headers.ratelimit).toBe(
      '"user";r=0;t=3',
    );
    clock.ms = 4000;
    expect(limits.take(slowUser, who('acme', 'alice'))).toBeUndefined();
    limits.close();
  });

  it('forgets buckets that are full again, and no others', async () => {
    const { limits, clock } = limiter();
    limits.take(both, who('acme', 'alice'));
    expect(limits.size()).toBe(2);
    await limits.reconcile(); // active since the last: kept
    clock.ms = 200; // the tenant's bucket is full again (10/s), the user's not yet (1/s)
    await limits.reconcile();
    expect(limits.size()).toBe(1);
    clock.ms = 3000;
    await limits.reconcile();
    expect(limits.size()).toBe(0);
    limits.close();
  });
});

describe('with a shared store', () => {
  const tenantOnly = compileRateLimit('/t', { perTenant: { requestsPerSecond: 5, burst: 10 } })!;
  const alice = who('acme', 'alice');

  /** A store granting `grant` of a shared bucket left at `shared`, recording what it is asked. */
  function store(lease: { grant: number; instances: number; shared: number }) {
    const asked: RateLeaseRequest[] = [];
    const leases: RouteRateLimitDeps['leases'] = async (_holder, requests) => {
      asked.push(...requests);
      return requests.map(() => lease);
    };
    return { asked, leases };
  }

  it('a new bucket admits one request at once, charged by its first lease; the next waits for that lease', async () => {
    const { asked, leases } = store({ grant: 2, instances: 3, shared: 4 });
    const { limits } = limiter(leases);
    expect(limits.take(tenantOnly, alice)).toBeUndefined();
    const waiting = limits.take(tenantOnly, alice);
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(asked).toEqual([
      {
        bucket: '%2Ft:tenant:5:10:acme',
        ratePerSecond: 5,
        burst: 10,
        held: 0,
        charge: 1,
        leaving: false,
      },
    ]);
    expect(limits.drainDecisions()).toEqual([
      { route: '/t', limit: 'tenant', admitted: 2, limited: 0, waited: 1 },
    ]);
    // The grant of 2: one went to the request that waited, one is left.
    expect(limits.take(tenantOnly, alice)).toBeUndefined();
    expect(refusal(() => limits.take(tenantOnly, alice)).code).toBe('too_many_requests');
    await limits.reconcile();
    expect(asked.at(-1)).toMatchObject({ held: 0, charge: 0, leaving: false });
    limits.close();
  });

  it('a bucket forgotten while the shared one was short of a token admits nothing before a lease until the refill brings one back', async () => {
    // The shared bucket is in debt after the first lease: -0.5, refilled at 5/s.
    const { asked, leases } = store({ grant: 0, instances: 2, shared: -0.5 });
    const { limits, clock } = limiter(leases);
    limits.take(tenantOnly, alice);
    await limits.reconcile(); // the first lease
    clock.ms = 100;
    await limits.reconcile(); // idle: gives back nothing, forgotten; the store says -0.5 still
    expect(limits.size()).toBe(0);
    expect(asked.at(-1)).toMatchObject({ held: 0, charge: 0, leaving: true });
    // 0.2 s later the refill has brought 1 token of the 1.5 needed: no token before a lease.
    clock.ms = 300;
    const waiting = limits.take(tenantOnly, alice);
    expect(waiting).toBeInstanceOf(Promise);
    await expect(waiting).rejects.toMatchObject({ code: 'too_many_requests' });
    // Used (refused) since the last reconcile: kept; then idle: forgotten, the store says -0.5.
    clock.ms = 400;
    await limits.reconcile();
    expect(limits.size()).toBe(1);
    clock.ms = 500;
    await limits.reconcile();
    expect(limits.size()).toBe(0);
    // 0.35 s later the shared bucket is past 1 token again: admitted at once.
    clock.ms = 850;
    expect(limits.take(tenantOnly, alice)).toBeUndefined();
    limits.close();
  });

  it('gives back what it holds when it closes', async () => {
    const { asked, leases } = store({ grant: 4, instances: 1, shared: 5 });
    const { limits } = limiter(leases);
    limits.take(tenantOnly, alice);
    await limits.reconcile();
    await limits.close();
    expect(asked.at(-1)).toMatchObject({ held: 4, charge: 0, leaving: true });
    expect(limits.size()).toBe(0);
  });

  it('when the store fails, a bucket limits alone at its last known share of the rate', async () => {
    let up = true;
    const { limits, clock, failures } = limiter(async (_holder, requests) => {
      if (!up) throw new Error('store down');
      return requests.map(() => ({ grant: 0, instances: 4, shared: 0 }));
    });
    const rate8 = compileRateLimit('/t', { perTenant: { requestsPerSecond: 8, burst: 8 } })!;
    limits.take(rate8, alice);
    await limits.reconcile(); // the first lease counts 4 instances, and grants nothing
    expect(admitted(limits, rate8, alice, 1)).toBe(0); // used since: kept at the next
    up = false;
    await limits.reconcile();
    expect(failures()).toBe(1);
    // 8/s shared by 4: 2/s here, at most 2 held.
    clock.ms = 10_000;
    expect(admitted(limits, rate8, alice, 10)).toBe(2);
    limits.close();
  });

  it('when the store fails at its first lease, a new bucket limits alone, less the request it admitted', async () => {
    const { limits, clock, failures } = limiter(async () => {
      throw new Error('store down');
    });
    const rate8 = compileRateLimit('/t', { perTenant: { requestsPerSecond: 8, burst: 8 } })!;
    limits.take(rate8, alice);
    await limits.reconcile();
    expect(failures()).toBe(1);
    // Alone at the whole rate (no count of instances yet): 7 of its 8 left at once.
    expect(admitted(limits, rate8, alice, 10)).toBe(7);
    clock.ms = 10_000;
    expect(admitted(limits, rate8, alice, 10)).toBe(8);
    limits.close();
  });
});

/** How many of `n` requests at one instant are admitted. */
function admitted(limits: RouteRateLimits, limit: RouteRateLimit, principal: Principal, n: number) {
  let count = 0;
  for (let i = 0; i < n; i++) {
    try {
      if (limits.take(limit, principal) !== undefined) throw new Error('waits for a lease');
      count++;
    } catch (err) {
      if (!isGatewayError(err)) throw err;
    }
  }
  return count;
}
