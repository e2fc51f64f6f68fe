/**
 * Rate limits across instances (`npm run bench:rate-limits`): ten gateways
 * in this process, each with its own Redis connection, on one redis-server
 * and one upstream, one tenant limited to 100/s (burst 100) and driven as
 * hard as a few keep-alive connections per gateway allow. Reported: admitted
 * per second against the stated bound `burst + rate × T` (docs/rate-limits.md),
 * requests answered, and Redis work per request from `INFO commandstats`:
 * script calls (the round trips) and every command counting those the
 * script runs inside. Exits non-zero past the bound.
 *
 * Environment: BENCH_RATE_SECONDS (default 60), BENCH_RATE_INSTANCES (10),
 * BENCH_RATE_CONCURRENCY (requests in flight per gateway, 4),
 * BENCH_RATE_INTERVAL_MS (`rateLimits.reconcileIntervalMs`, the default 500).
 */
import { startIdentityFixture, BOB, tokenFor } from '../support/identity-fixture.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import { driveLoad } from '../support/rate-load.js';
import { startEchoUpstream } from '../support/upstream.js';
import { positiveInt } from './env.js';
import { commandsBetween, readCommandCounts } from './redis-stats.js';

const SECONDS = positiveInt('BENCH_RATE_SECONDS', 60);
const INSTANCES = positiveInt('BENCH_RATE_INSTANCES', 10);
const CONCURRENCY = positiveInt('BENCH_RATE_CONCURRENCY', 4);
const INTERVAL_MS = positiveInt('BENCH_RATE_INTERVAL_MS', 500);
const LIMIT = { requestsPerSecond: 100, burst: 100 };

async function main(): Promise<void> {
  const echo = await startEchoUpstream();
  const fx = await startIdentityFixture({
    rateLimits: { reconcileIntervalMs: INTERVAL_MS },
    routes: [
      { prefix: '/limited', upstream: echo.url, rateLimit: { perTenant: LIMIT } },
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
    const bound = LIMIT.burst + LIMIT.requestsPerSecond * seconds;
    const requests = load.admitted + load.limited;
    const calls = (counted.get('evalsha') ?? 0) + (counted.get('eval') ?? 0);
    const commands = [...counted.values()].reduce((a, b) => a + b, 0);
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
        'bound burst + rate × T',
        `${bound.toFixed(0)} (${(bound / seconds).toFixed(1)}/s): ${load.admitted <= bound ? 'within' : 'EXCEEDED'}`,
      ],
      ['limited (429)', String(load.limited)],
      ['other statuses', JSON.stringify([...load.other])],
      [
        'Redis script calls',
        `${calls} (${(calls / seconds).toFixed(1)}/s, ${(calls / requests).toFixed(4)} per request)`,
      ],
      [
        'Redis commands, inside scripts too',
        `${commands} (${(commands / requests).toFixed(4)} per request): ${JSON.stringify([...counted])}`,
      ],
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
    if (load.admitted > bound || load.other.size > 0) process.exitCode = 1;
  } finally {
    await fx.close();
    await echo.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
