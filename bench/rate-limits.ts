/**
 * Rate limits across instances (`npm run bench:rate-limits`): ten gateways
 * in this process, each with its own Redis connection, on one redis-server
 * and one upstream, one tenant limited to 100/s (burst 100) and driven as
 * hard as a few keep-alive connections per gateway allow. Reported: admitted
 * per second against the stated bound `burst + rate × T + N`
 * (docs/rate-limits.md), requests answered, and Redis work per request from
 * `INFO commandstats`: script calls (the round trips) and every command
 * counting those the script runs inside, apart from the revocation lease
 * renewals (which run whatever the traffic). Then a sparse tenant: one request
 * every 1.1 s, round robin over the gateways (each finds its bucket
 * forgotten), each paired with one to an unlimited route (the order
 * alternating): the latency of both, and how many waited for a lease. Exits non-zero past the bound or
 * when a sparse request waited.
 *
 * Environment: BENCH_RATE_SECONDS (default 60), BENCH_RATE_INSTANCES (10),
 * BENCH_RATE_CONCURRENCY (requests in flight per gateway, 4),
 * BENCH_RATE_INTERVAL_MS (`rateLimits.reconcileIntervalMs`, the default 500),
 * BENCH_RATE_SPARSE_REQUESTS (20).
 */
import { ALICE, startIdentityFixture, BOB, tokenFor } from '../test/support/identity-fixture.js';
import { parseSamples, total } from '../test/support/prometheus-text.js';
import { adminUrlOf, bearer, type TestGateway } from '../test/support/gateway.js';
import { driveLoad } from '../test/support/rate-load.js';
import { startEchoUpstream } from '../test/support/upstream.js';
import { positiveInt } from './env.js';
import { commandsBetween, readCommandCounts } from './redis-stats.js';

const SECONDS = positiveInt('BENCH_RATE_SECONDS', 60);
const INSTANCES = positiveInt('BENCH_RATE_INSTANCES', 10);
const CONCURRENCY = positiveInt('BENCH_RATE_CONCURRENCY', 4);
const INTERVAL_MS = positiveInt('BENCH_RATE_INTERVAL_MS', 500);
const SPARSE_REQUESTS = positiveInt('BENCH_RATE_SPARSE_REQUESTS', 20);
const LIMIT = { requestsPerSecond: 100, burst: 100 };

async function main(): Promise<void> {
  const echo = await startEchoUpstream();
  const fx = await startIdentityFixture({
    rateLimits: { reconcileIntervalMs: INTERVAL_MS },
    routes: [
      { prefix: '/limited', upstream: echo.url, rateLimit: { perTenant: LIMIT } },
      { prefix: '/sparse', upstream: echo.url, rateLimit: { perTenant: LIMIT } },
      { prefix: '/', upstream: echo.url },
    ],
  });
  try {
    const gateways: TestGateway[] = [fx.gw];
    for (let i = 1; i < INSTANCES; i++) gateways.push(await fx.startAnother());
    const token = (await tokenFor(fx.gw.url, BOB, 'globex')).access_token;
    // Every gateway caches the token's session first: the run measures the steady state.
    for (const gw of gateways) {
      const res = await fetch(`${gw.url}/`, { headers: { authorization: bearer(token) } });
      if (res.status !== 200) throw new Error(`warm-up answered ${res.status}`);
    }
    const before = await readCommandCounts(fx.redis.port);
    const load = await driveLoad({
      urls: gateways.map((gw) => gw.url),
      path: '/limited/x',
      token,
      concurrency: CONCURRENCY,
      durationMs: SECONDS * 1000,
    });
    const { counted } = commandsBetween(before, await readCommandCounts(fx.redis.port));
    const seconds = load.elapsedMs / 1000;
    const bound = LIMIT.burst + LIMIT.requestsPerSecond * seconds + INSTANCES;
    const requests = load.admitted + load.limited;
    // The revocation leases' renewals (lease mode, the default) run whatever the traffic:
    // one script each, with one ZREMRANGEBYSCORE, TIME, ZSCORE and ZADD in it.
    const renewals = counted.get('zremrangebyscore') ?? 0;
    const calls = (counted.get('evalsha') ?? 0) + (counted.get('eval') ?? 0) - renewals;
    const commands = [...counted.values()].reduce((a, b) => a + b, 0) - 5 * renewals;
    const rows: [string, string][] = [
      ['instances, reconcile interval', `${INSTANCES}, ${INTERVAL_MS} ms`],
      ['limit', `${LIMIT.requestsPerSecond}/s, burst ${LIMIT.burst}`],
      ['duration', `${seconds.toFixed(1)} s`],
      ['requests answered', `${requests} (${(requests / seconds).toFixed(0)}/s)`],
      [
        'admitted',
        `${load.admitted} (${(load.admitted / seconds).toFixed(1)}/s; upstream saw ${echo.counts.received - INSTANCES})`,
      ],
      [
        'bound burst + rate × T + N',
        `${bound.toFixed(0)} (${(bound / seconds).toFixed(1)}/s): ${load.admitted <= bound ? 'within' : 'EXCEEDED'}`,
      ],
      ['limited (429)', String(load.limited)],
      ['other statuses', JSON.stringify([...load.other])],
      [
        'Redis rate-limit script calls',
        `${calls} (${(calls / seconds).toFixed(1)}/s, ${(calls / requests).toFixed(4)} per request)`,
      ],
      [
        'Redis commands, inside them too',
        `${commands} (${(commands / requests).toFixed(4)} per request)`,
      ],
      [
        'revocation lease renewals',
        `${renewals} (${(renewals / seconds).toFixed(1)}/s, ${(renewals / requests).toFixed(4)} per request)`,
      ],
      ['Redis commands by name', JSON.stringify([...counted])],
    ];
    const sparse = await sparseTenant(gateways, fx.redis.port);
    rows.push(...sparse.rows);
    const width = Math.max(...rows.map(([name]) => name.length));
    for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
    if (load.admitted > bound || load.other.size > 0 || !sparse.ok) process.exitCode = 1;
  } finally {
    await fx.close();
    await echo.close();
  }
}

/**
 * One request every 1.1 s (over two reconcile intervals at the default: the
 * bucket is forgotten in between), round robin, each followed by the same
 * request to an unlimited route, before or after it in turn.
 */
async function sparseTenant(gateways: readonly TestGateway[], redisPort: number) {
  const token = (await tokenFor(gateways[0]!.url, ALICE, 'acme')).access_token;
  const timed = async (gw: TestGateway, path: string) => {
    const sent = performance.now();
    const res = await fetch(`${gw.url}${path}`, { headers: { authorization: bearer(token) } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    return performance.now() - sent;
  };
  for (const gw of gateways) await timed(gw, '/'); // the session cached everywhere
  // The flood's buckets settle once more, then go idle and give back: not counted here.
  await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS));
  const before = await readCommandCounts(redisPort);
  const limited: number[] = [];
  const unlimited: number[] = [];
  for (let i = 0; i < SPARSE_REQUESTS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const gw = gateways[i % gateways.length]!;
    // Which goes first alternates: the first after a pause pays for cold paths.
    if (i % 2 === 0) limited.push(await timed(gw, '/sparse/x'));
    unlimited.push(await timed(gw, '/'));
    if (i % 2 === 1) limited.push(await timed(gw, '/sparse/x'));
  }
  await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS)); // the last gives back
  const { counted } = commandsBetween(before, await readCommandCounts(redisPort));
  const calls = (counted.get('hgetall') ?? 0) / SPARSE_REQUESTS; // one per rate-limit script call
  let waited = 0;
  for (const gw of gateways) {
    const samples = parseSamples(await (await fetch(`${adminUrlOf(gw)}/metrics`)).text());
    waited += total(samples, 'tenant_gateway_rate_limit_lease_waits_total', { route: '/sparse' });
  }
  const ms = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return `p50 ${at(0.5).toFixed(2)} ms, max ${at(1).toFixed(2)} ms`;
  };
  const rows: [string, string][] = [
    ['sparse tenant: requests', `${SPARSE_REQUESTS}, one every 1.1 s, round robin`],
    ['sparse tenant: limited route', ms(limited)],
    ['sparse tenant: unlimited route', ms(unlimited)],
    ['sparse tenant: waited for a lease', String(waited)],
    ['sparse tenant: script calls per request', `${calls.toFixed(2)} (in the background)`],
  ];
  return { rows, ok: waited === 0 };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
