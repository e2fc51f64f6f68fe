/**
 * The per-request decision on a fake clock: both sides take a token or
 * neither does, the 429 it throws, idle buckets forgotten, a bucket new to
 * the instance waiting for its first lease, and limiting alone when the
 * store fails. The shared store's side is proved against a real Redis in
 * `rate-limits.redis.test.ts`.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/authenticate.js';
import { isGatewayError, type GatewayError } from '../../src/errors.js';
import { createRateLimits, type RateLimitDeps } from '../../src/proxy/rate-limits.js';
import { compileRateLimit } from '../../src/proxy/rate-policy.js';

const who = (tenantId: string, userId: string) => ({ tenantId, userId }) as Principal;

function limiter(leases: RateLimitDeps['leases'] = undefined) {
  const clock = { ms: 0 };
  let failures = 0;
  const limits = createRateLimits({
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
    expect(limits.admit(both, who('acme', 'alice'))).toBeUndefined();
    expect(limits.admit(both, who('acme', 'alice'))).toBeUndefined();
    const err = refusal(() => limits.admit(both, who('acme', 'alice')));
    expect(err.code).toBe('too_many_requests');
    expect(err.headers).toEqual({
      'retry-after': '1',
      'ratelimit-policy': '"tenant";q=10;w=1, "user";q=1;w=1',
      ratelimit: '"user";r=0;t=1',
    });
    // Alice's refusal took nothing from the tenant: Bob has its third token.
    expect(limits.admit(both, who('acme', 'bob'))).toBeUndefined();
    expect(refusal(() => limits.admit(both, who('acme', 'carol'))).headers.ratelimit).toBe(
      '"tenant";r=0;t=1',
    );
    clock.ms = 1000;
    expect(limits.admit(both, who('acme', 'alice'))).toBeUndefined();
    expect(limits.drainDecisions()).toEqual([
      { route: '/api', limit: 'tenant', admitted: 4, limited: 1 },
      { route: '/api', limit: 'user', admitted: 4, limited: 1 },
    ]);
    expect(limits.drainDecisions()).toEqual([]);
    limits.close();
  });

  it('forgets buckets that are full again, and no others', async () => {
    const { limits, clock } = limiter();
    limits.admit(both, who('acme', 'alice'));
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
  it('a new bucket waits for its first lease once, then decides without waiting', async () => {
    const asked: unknown[] = [];
    const { limits } = limiter(async (_holder, requests) => {
      asked.push(...requests);
      return requests.map(() => ({ grant: 2, instances: 3 }));
    });
    const tenantOnly = compileRateLimit('/t', { perTenant: { requestsPerSecond: 5, burst: 10 } })!;
    const waiting = limits.admit(tenantOnly, who('acme', 'alice'));
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(asked).toEqual([
      {
        bucket: '%2Ft:tenant:5:10:acme',
        ratePerSecond: 5,
        burst: 10,
        held: 0,
        leaving: false,
      },
    ]);
    expect(limits.admit(tenantOnly, who('acme', 'alice'))).toBeUndefined();
    expect(refusal(() => limits.admit(tenantOnly, who('acme', 'alice'))).code).toBe(
      'too_many_requests',
    );
    limits.close();
  });

  it('gives back what it holds when it closes', async () => {
    const asked: { held: number; leaving: boolean }[] = [];
    const { limits } = limiter(async (_holder, requests) => {
      asked.push(...requests);
      return requests.map(() => ({ grant: 4, instances: 1 }));
    });
    const tenantOnly = compileRateLimit('/t', { perTenant: { requestsPerSecond: 5, burst: 10 } })!;
    await limits.admit(tenantOnly, who('acme', 'alice'));
    await limits.close();
    expect(asked.at(-1)).toMatchObject({ held: 3, leaving: true });
    expect(limits.size()).toBe(0);
  });

  it('when the store fails, a bucket limits alone at its last known share of the rate', async () => {
    let up = true;
    const { limits, clock, failures } = limiter(async (_holder, requests) => {
      if (!up) throw new Error('store down');
      return requests.map(() => ({ grant: 0, instances: 4 }));
    });
    const tenantOnly = compileRateLimit('/t', { perTenant: { requestsPerSecond: 8, burst: 8 } })!;
    await Promise.resolve(limits.admit(tenantOnly, who('acme', 'alice'))).catch(() => undefined);
    up = false;
    await limits.reconcile();
    expect(failures()).toBe(1);
    // 8/s shared by 4: 2/s here, at most 2 held.
    clock.ms = 10_000;
    let admitted = 0;
    for (let i = 0; i < 10; i++) {
      try {
        limits.admit(tenantOnly, who('acme', 'alice'));
        admitted++;
      } catch {
        // limited
      }
    }
    expect(admitted).toBe(2);
    limits.close();
  });
});
