/**
 * `routes[].rateLimit` against a real redis-server, a real upstream and real
 * gateways: a burst then the refill, the 429 with `Retry-After` and the
 * RateLimit headers, a user's bucket apart from the tenant's, one tenant's
 * flood leaving another alone, ten instances on one Redis admitting together
 * no more than `burst + rate × T + N` (the bound in docs/rate-limits.md) at
 * a few Redis commands per second — under a flood and under bursts spaced so
 * every instance forgets its bucket in between —, a sparse tenant's requests
 * answered without waiting for the store, and the buckets limiting alone
 * while the store does not answer.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { commandsBetween, readCommandCounts } from '../../bench/redis-stats.js';
import { expectError } from '../support/expect-error.js';
import { startGatewayBehind } from '../support/gateway-behind.js';
import { adminUrlOf, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, startIdentityFixture, tokenFor } from '../support/identity-fixture.js';
import { parseSamples, total } from '../support/prometheus-text.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { driveLoad } from '../support/rate-load.js';
import { startTcpRelay } from '../support/tcp-relay.js';
import { startEchoUpstream } from '../support/upstream.js';

const CLUSTER = { requestsPerSecond: 100, burst: 100 };
const SPACED = { requestsPerSecond: 2, burst: 2 };
/** One token every 4 s. */
const SLOW = { requestsPerSecond: 0.25, burst: 1 };
const INSTANCES = 10;
/** What the rate-limit and revocation-lease scripts run, and the calls themselves. */
const SCRIPT_COMMANDS = [
  'evalsha',
  'eval',
  'time',
  'hgetall',
  'hset',
  'hdel',
  'pexpire',
  'zremrangebyscore',
  'zscore',
  'zadd',
];

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      {
        prefix: '/burst',
        upstream: echo.url,
        rateLimit: { perTenant: { requestsPerSecond: 10, burst: 20 } },
      },
      {
        prefix: '/per-user',
        upstream: echo.url,
        rateLimit: {
          perTenant: { requestsPerSecond: 1000, burst: 1000 },
          perUser: { requestsPerSecond: 1, burst: 3 },
        },
      },
      {
        prefix: '/noisy',
        upstream: echo.url,
        rateLimit: { perTenant: { requestsPerSecond: 10, burst: 20 } },
      },
      { prefix: '/cluster', upstream: echo.url, rateLimit: { perTenant: CLUSTER } },
      { prefix: '/spaced', upstream: echo.url, rateLimit: { perTenant: SPACED } },
      {
        prefix: '/sparse',
        upstream: echo.url,
        rateLimit: { perTenant: { requestsPerSecond: 10, burst: 10 } },
      },
      {
        prefix: '/paused',
        upstream: echo.url,
        rateLimit: { perTenant: { requestsPerSecond: 20, burst: 20 } },
      },
      { prefix: '/obey', upstream: echo.url, rateLimit: { perTenant: SLOW } },
      {
        prefix: '/reload',
        upstream: echo.url,
        rateLimit: { perTenant: { requestsPerSecond: 0.01, burst: 5 } },
      },
      { prefix: '/', upstream: echo.url },
    ],
  }),
  {
    start: (config) => startIdentityFixture(config),
  },
);
let aliceAcme: string;
let bobAcme: string;
let bobGlobex: string;

beforeAll(async () => {
  aliceAcme = (await tokenFor(s.fx.gw.url, ALICE, 'acme')).access_token;
  bobAcme = (await tokenFor(s.fx.gw.url, BOB, 'acme')).access_token;
  bobGlobex = (await tokenFor(s.fx.gw.url, BOB, 'globex')).access_token;
});

const get = (gw: TestGateway, path: string, token: string) =>
  fetch(`${gw.url}${path}`, { headers: { authorization: bearer(token) } });

/** `n` requests at once; their statuses, and the first 429. */
async function burst(gw: TestGateway, path: string, token: string, n: number) {
  const answers = await Promise.all(Array.from({ length: n }, () => get(gw, path, token)));
  const statuses = answers.map((res) => res.status);
  const refused = answers.find((res) => res.status === 429);
  for (const res of answers) if (res !== refused) await res.arrayBuffer();
  return {
    admitted: statuses.filter((s) => s === 200).length,
    limited: statuses.filter((s) => s === 429).length,
    others: statuses.filter((s) => s !== 200 && s !== 429),
    refused,
  };
}

describe('one gateway', () => {
  it('admits the burst at once, refuses the rest with 429 and its headers, then refills at the rate', async () => {
    const before = s.up.echo.counts.received;
    const started = performance.now();
    const first = await burst(s.fx.gw, '/burst/x', aliceAcme, 30);
    const firstEnded = performance.now();
    expect(first.others).toEqual([]);
    // 20 in the bucket, and what refilled at 10/s while the 30 were answered
    // (the bound follows the time they took: a loaded machine takes longer).
    expect(first.admitted).toBeGreaterThanOrEqual(20);
    expect(first.admitted).toBeLessThanOrEqual(20 + refilledAt10PerSecond(started, firstEnded));
    expect(s.up.echo.counts.received - before).toBe(first.admitted);
    // The first was admitted before the bucket's first lease; those after it waited for it.
    const waits = total(
      parseSamples(await (await fetch(`${adminUrlOf(s.fx.gw)}/metrics`)).text()),
      'tenant_gateway_rate_limit_lease_waits_total',
      { route: '/burst', limit: 'tenant' },
    );
    expect(waits).toBeGreaterThan(0);
    expect(waits).toBeLessThanOrEqual(29);
    const refused = first.refused as Response;
    const retryAfter = refused.headers.get('retry-after');
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"tenant";q=10;w=1');
    expect(refused.headers.get('ratelimit')).toBe(`"tenant";r=0;t=${retryAfter}`);
    await expectError(refused, 429, 'too_many_requests');

    await delay(1200);
    const refilled = await burst(s.fx.gw, '/burst/x', aliceAcme, 30);
    const refilledEnded = performance.now();
    // ~12 tokens in 1.2 s at 10/s: the bucket went idle here, and its first lease brings them;
    // never more than the rate gave since the first burst emptied it, and the
    // one token an instance may give itself ahead of the store (the N of the bound).
    expect(refilled.admitted).toBeGreaterThanOrEqual(8);
    expect(refilled.admitted).toBeLessThanOrEqual(
      refilledAt10PerSecond(firstEnded - 100, refilledEnded) + 1,
    );
  });

  it("limits each user on its own: one user's empty bucket leaves another's alone", async () => {
    const alice = await burst(s.fx.gw, '/per-user/x', aliceAcme, 6);
    expect(alice).toMatchObject({ admitted: 3, limited: 3 });
    expect(alice.refused?.headers.get('ratelimit')).toMatch(/^"user";r=0;t=\d+$/);
    expect(alice.refused?.headers.get('ratelimit-policy')).toBe(
      '"tenant";q=1000;w=1, "user";q=1;w=1',
    );
    // Same tenant, another user: a bucket of its own.
    expect(await burst(s.fx.gw, '/per-user/x', bobAcme, 6)).toMatchObject({
      admitted: 3,
      limited: 3,
    });
  });

  it('a WebSocket upgrade takes a token too, and is refused with 429 once the bucket is empty', async () => {
    // Alice's user bucket on /per-user was emptied above.
    const head = await rawUpgrade(
      s.fx.gw.url,
      '/per-user/live',
      [`Authorization: ${bearer(aliceAcme)}`],
      'close',
    );
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 429 Too Many Requests');
    expect(head.toLowerCase()).toMatch(/\r\nretry-after: [1-9]\d*\r\n/);
    expect(head).toContain('"too_many_requests"');
  });

  it("one tenant's flood leaves another tenant's bucket alone", async () => {
    const noisy = await burst(s.fx.gw, '/noisy/x', bobGlobex, 60);
    expect(noisy.limited).toBeGreaterThan(30);
    const quiet = await burst(s.fx.gw, '/noisy/x', bobAcme, 10);
    expect(quiet.admitted).toBe(10);
  });

  it('counts the refusals as the outcome too_many_requests and in the decisions metric', async () => {
    const samples = parseSamples(await (await fetch(`${adminUrlOf(s.fx.gw)}/metrics`)).text());
    expect(
      total(samples, 'tenant_gateway_requests_total', {
        route: '/burst',
        code: '429',
        outcome: 'refused',
        reason: 'too_many_requests',
      }),
    ).toBeGreaterThan(0);
    const decisions = (outcome: string) =>
      total(samples, 'tenant_gateway_rate_limit_decisions_total', {
        route: '/burst',
        limit: 'tenant',
        outcome,
      });
    expect(decisions('admitted')).toBeGreaterThan(0);
    expect(decisions('limited')).toBeGreaterThan(0);
    expect(samples.some((s) => 'tenant' in s.labels || 'user' in s.labels)).toBe(false);
  });
});

/**
 * Tests that mostly wait out a refill or a forgotten bucket, side by side: each on a
 * route of its own (`/obey`, `/sparse`), the memory one on a gateway of its own, the
 * sparse one behind a relay of its own; none counts the store's commands or pauses it.
 */
describe.concurrent('waiting out refills', () => {
  describe('a client that obeys Retry-After', () => {
    for (const store of ['memory', 'redis'] as const) {
      it(`is admitted at its next try, though the refill takes longer than a reconcile (${store} store)`, async () => {
        // The memory store: buckets refilling in process; Redis: leased from the shared bucket.
        const gw =
          store === 'redis'
            ? s.fx.gw
            : await startTestGateway({ ...s.fx.config, store: undefined });
        try {
          const token = (await tokenFor(gw.url, ALICE, 'acme')).access_token;
          const first = await get(gw, '/obey/x', token);
          await first.arrayBuffer();
          expect(first.status).toBe(200);
          const refused = await get(gw, '/obey/x', token);
          await expectError(refused, 429, 'too_many_requests');
          // The bucket's one token comes back 4 s after it was taken: as the policy says.
          expect(refused.headers.get('ratelimit-policy')).toBe('"tenant";q=1;w=4');
          expect(refused.headers.get('retry-after')).toBe('4');
          expect(refused.headers.get('ratelimit')).toBe('"tenant";r=0;t=4');
          await delay(4000);
          const next = await get(gw, '/obey/x', token);
          await next.arrayBuffer();
          expect(next.status).toBe(200);
        } finally {
          if (gw !== s.fx.gw) await gw.close();
        }
      }, 30_000);
    }
  });

  describe('a tenant sending less than one request per interval', () => {
    it('has each request decided at once, without waiting for the store, though its bucket was forgotten in between', async () => {
      // The gateway's Redis link is slow (half a second each way): a request that waited for
      // a grant would take a second. Plain revocation: in lease mode the lease could not be renewed
      // in time over this link, and the session cache would not be trusted.
      const relay = await startTcpRelay(s.fx.redis.port);
      const gw = await startGatewayBehind(s.fx, relay, {
        config: { revocation: { mode: 'plain' } },
        redis: { commandTimeoutMs: 10_000 },
      });
      // Slowed once started: its start crossing a 1 s round trip took ~8 s, and is not the
      // subject; every request below, and the leases of its buckets, cross the slow link.
      relay.setDelay(500);
      try {
        // The session's first check crosses the link; later ones come from the cache.
        expect((await get(gw, '/', aliceAcme)).status).toBe(200);
        const took: number[] = [];
        for (let i = 0; i < 4; i++) {
          // The last request's first lease is back (1 s), then idle for a reconcile: forgotten.
          if (i > 0) await delay(2500);
          const sent = performance.now();
          const res = await get(gw, '/sparse/x', aliceAcme);
          await res.arrayBuffer();
          took.push(performance.now() - sent);
          expect(res.status).toBe(200);
        }
        console.log(
          `sparse requests over a 1 s store round trip took ${took.map((ms) => ms.toFixed(0)).join(', ')} ms`,
        );
        // Well under one store round trip each, and none waited for a lease.
        for (const ms of took) expect(ms).toBeLessThan(1000);
        const samples = parseSamples(await (await fetch(`${adminUrlOf(gw)}/metrics`)).text());
        const sparse = { route: '/sparse', limit: 'tenant' };
        expect(
          total(samples, 'tenant_gateway_rate_limit_decisions_total', {
            ...sparse,
            outcome: 'admitted',
          }),
        ).toBe(4);
        expect(total(samples, 'tenant_gateway_rate_limit_lease_waits_total', sparse)).toBe(0);
        expect(relay.links.length).toBeGreaterThan(0);
      } finally {
        await gw.close();
        await relay.close();
      }
    }, 60_000);
  });
});

describe('a config reload', () => {
  /** The fixture's config with `/reload`'s rateLimit replaced. */
  const withReloadLimit = (burst: number, extraRoute: boolean) => {
    const routes = (s.fx.config['routes'] as Record<string, unknown>[]).map((route) =>
      route['prefix'] === '/reload'
        ? { ...route, rateLimit: { perTenant: { requestsPerSecond: 0.01, burst } } }
        : route,
    );
    if (extraRoute) routes.unshift({ prefix: '/added', upstream: s.up.echo.url });
    return validateConfig(
      { ...s.fx.config, routes, listen: { host: '127.0.0.1', port: 0 } },
      process.cwd(),
      'test',
    );
  };

  it("keeps a route's buckets when its rateLimit is unchanged, and starts them fresh when it changed", async () => {
    expect(await burst(s.fx.gw, '/reload/x', aliceAcme, 7)).toMatchObject({
      admitted: 5,
      limited: 2,
    });
    await s.fx.gw.gateway.reload(withReloadLimit(5, true));
    expect(await burst(s.fx.gw, '/reload/x', aliceAcme, 3)).toMatchObject({
      admitted: 0,
      limited: 3,
    });
    await s.fx.gw.gateway.reload(withReloadLimit(6, true));
    expect(await burst(s.fx.gw, '/reload/x', aliceAcme, 8)).toMatchObject({
      admitted: 6,
      limited: 2,
    });
  });
});

describe('ten gateways on one Redis', () => {
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    gateways.push(s.fx.gw);
    for (let i = 1; i < INSTANCES; i++) gateways.push(await s.fx.startAnother());
    // Each gateway has checked the token's session once: the load runs from caches.
    for (const gw of gateways) expect((await get(gw, '/', bobGlobex)).status).toBe(200);
  }, 60_000);

  it('admit together at most burst + rate × T + N and well above half the rate, at a few script calls per reconcile, none per request', async () => {
    const before = await readCommandCounts(s.fx.redis.port);
    const received = s.up.echo.counts.received;
    const load = await driveLoad({
      urls: gateways.map((gw) => gw.url),
      path: '/cluster/x',
      token: bobGlobex,
      concurrency: 4,
      durationMs: 4000,
    });
    const { counted } = commandsBetween(before, await readCommandCounts(s.fx.redis.port));
    const seconds = load.elapsedMs / 1000;
    // Each instance may admit one request for a bucket new to it before its first grant.
    const bound = CLUSTER.burst + CLUSTER.requestsPerSecond * seconds + INSTANCES;
    const requests = load.admitted + load.limited;
    // The revocation leases' renewals run whatever the traffic, four per lease (2 s) per
    // instance: one script each, with one ZREMRANGEBYSCORE, TIME, ZSCORE and ZADD in it.
    const renewals = counted.get('zremrangebyscore') ?? 0;
    expect(renewals).toBeLessThanOrEqual(10 * (seconds / 0.5 + 2));
    // Round trips: the script calls (EVALSHA, and EVAL when a script is not loaded yet).
    const calls = (counted.get('evalsha') ?? 0) + (counted.get('eval') ?? 0) - renewals;
    const all = [...counted.values()].reduce((a, b) => a + b, 0) - 5 * renewals;
    console.log(
      `10 instances, ${seconds.toFixed(2)} s: admitted ${load.admitted} (bound ${bound.toFixed(0)}), ` +
        `limited ${load.limited}; ${calls} script calls (${(calls / requests).toFixed(4)} a request), ` +
        `${all} commands counting those inside scripts: ${JSON.stringify([...counted])}`,
    );
    expect([...load.other]).toEqual([]);
    expect(s.up.echo.counts.received - received).toBe(load.admitted);
    expect(load.admitted).toBeLessThanOrEqual(bound);
    // Not starved: leases reach every instance in time.
    expect(load.admitted).toBeGreaterThanOrEqual(0.5 * CLUSTER.requestsPerSecond * seconds);
    // Per reconcile (each instance, every 500 ms, plus its first), not per request;
    // nothing else reaches Redis while the sessions are cached: only the two scripts'
    // commands (HDEL when an instance leaves a bucket or one is written off).
    expect(calls).toBeLessThanOrEqual(10 * (seconds / 0.5 + 2));
    expect([...counted.keys()].filter((name) => !SCRIPT_COMMANDS.includes(name))).toEqual([]);
    for (const inEveryCall of ['hgetall', 'hset', 'pexpire'])
      expect(counted.get(inEveryCall)).toBe(calls);
    // 0.008 a request at the ~2,600 requests/s this harness reached; held loosely here
    // (a loaded machine answers fewer), the bench reports the steady state.
    expect(calls / requests).toBeLessThan(0.1);
  }, 60_000);

  it('admit together at most burst + rate × T + N when bursts are spaced so that every instance forgets its bucket in between', async () => {
    // Every 1.1 s (over two reconcile intervals: each bucket is idle for one and forgotten),
    // three requests at once to each gateway: each round, every gateway starts a new bucket,
    // which may admit one request before its first grant — charged, and not again while
    // the shared bucket is in debt.
    const received = s.up.echo.counts.received;
    const started = performance.now();
    let admitted = 0;
    const statuses = new Map<number, number>();
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(
        gateways.flatMap((gw) =>
          [1, 2, 3].map(async () => {
            const res = await get(gw, '/spaced/x', bobGlobex);
            await res.arrayBuffer();
            return res.status;
          }),
        ),
      );
      for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      admitted += answers.filter((status) => status === 200).length;
      if (round < 7) await delay(1100);
    }
    const seconds = (performance.now() - started) / 1000;
    const bound = SPACED.burst + SPACED.requestsPerSecond * seconds + INSTANCES;
    console.log(
      `spaced bursts, ${INSTANCES} instances, ${seconds.toFixed(2)} s: admitted ${admitted} ` +
        `(bound ${bound.toFixed(1)}; ${INSTANCES * 3 * 8} sent): ${JSON.stringify([...statuses])}`,
    );
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
    expect(s.up.echo.counts.received - received).toBe(admitted);
    expect(admitted).toBeLessThanOrEqual(bound);
    expect(admitted).toBeGreaterThanOrEqual(0.5 * SPACED.requestsPerSecond * seconds);
  }, 60_000);
});

describe('the store not answering', () => {
  it('the buckets go on limiting alone, and requests whose session is cached still flow', async () => {
    // Plain revocation: in lease mode an instance that cannot renew its lease (a write)
    // stops trusting its session cache, and every request then needs the store (503 here).
    const gw = await startTestGateway({ ...s.fx.config, revocation: { mode: 'plain' } });
    try {
      await limitsAlone(gw);
    } finally {
      await gw.close();
    }
  }, 30_000);
});

/** A gateway's buckets while its store takes no writes: limiting alone, at its last share. */
async function limitsAlone(gw: TestGateway): Promise<void> {
  expect((await burst(gw, '/paused/x', aliceAcme, 40)).admitted).toBeGreaterThanOrEqual(20);
  const failures = async () =>
    total(
      parseSamples(await (await fetch(`${adminUrlOf(gw)}/metrics`)).text()),
      'tenant_gateway_rate_limit_reconcile_failures_total',
    );
  const failedBefore = await failures();
  // Scripts (every write) wait; reads and pub/sub go on, so sessions stay cached.
  const admin = new Redis(s.fx.redis.url);
  await admin.call('CLIENT', 'PAUSE', '5000', 'WRITE');
  try {
    let admitted = 0;
    let limited = 0;
    const started = performance.now();
    while (performance.now() - started < 3500) {
      const round = await burst(gw, '/paused/x', aliceAcme, 10);
      expect(round.others).toEqual([]);
      admitted += round.admitted;
      limited += round.limited;
      await delay(100);
    }
    const seconds = (performance.now() - started) / 1000;
    expect(await failures()).toBeGreaterThan(failedBefore);
    // Alone at 20/s (the last count of instances was 1): it admits, and limits.
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(20 + 20 + 20 * seconds);
    expect(limited).toBeGreaterThan(0);
  } finally {
    await admin.call('CLIENT', 'UNPAUSE');
    admin.disconnect();
  }
}

/**
 * The most tokens a 10/s bucket can have given between two moments (ms):
 * one per 100 ms, rounded up, and one more for a token that was nearly whole.
 */
function refilledAt10PerSecond(fromMs: number, toMs: number): number {
  return Math.ceil((toMs - fromMs) / 100) + 1;
}
