/**
 * Issue 33's performance target: refreshes per second against Basic logins
 * per second, on the same machine, the same built gateway (Redis store,
 * bcrypt cost 10, `tokens.refresh.enabled`). A login is bcrypt-bound; a
 * refresh is a few store round trips and one signature, so it should run at
 * least 20 times as many per second.
 *
 * Each of `CONNECTIONS` workers sends one request at a time for `SECONDS`:
 * the login phase `GET /1/token`; the refresh phase rotates a chain of its
 * own (`grant_type=refresh_token` with the successor of its last answer), so
 * every refresh is a real rotation, never a grace. The load runs in this
 * process beside the gateway: on a small machine both figures are lower than
 * on a separate load host, the ratio is what the target is about.
 *
 * `npm run bench:refresh` (builds first).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { startRedisServer } from '../test/support/redis-server.js';
import { basicAuthorization, BENCH_TENANT, writeGatewayFiles } from './gateway-config.js';
import {
  createTeardown,
  findFreePort,
  PROJECT_ROOT,
  runMain,
  spawnNode,
  waitForPort,
} from './processes.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

const teardown = createTeardown();

async function main(): Promise<void> {
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const port = await findFreePort();
  // The upstream is never called: only the identity endpoints are measured.
  const files = writeGatewayFiles({ port, redisUrl: redis.url, upstream: 'http://127.0.0.1:9' });
  teardown.add(() => rmSync(files.dir, { recursive: true, force: true }));
  const config = parse(readFileSync(files.configFile, 'utf8')) as Record<string, unknown>;
  const tokens = config.tokens as Record<string, unknown>;
  config.tokens = { ...tokens, refresh: { enabled: true } };
  config.log = { level: 'warn' };
  writeFileSync(files.configFile, stringify(config));
  const gateway = spawnNode(
    'gateway',
    ['dist/cli.js', 'serve', '--config', files.configFile],
    PROJECT_ROOT,
  );
  teardown.add(() => gateway.stop());
  await waitForPort(gateway, port, 30_000);
  const url = `http://127.0.0.1:${port}`;

  const logins = await during(SECONDS, () => async () => void (await login(url)));
  const chains = await Promise.all(
    Array.from({ length: CONNECTIONS }, () => login(url).then((a) => a.refresh_token)),
  );
  const refreshes = await during(SECONDS, (worker) => async () => {
    chains[worker] = await refresh(url, chains[worker] as string);
  });
  const line = (name: string, perSecond: number) =>
    `${name.padEnd(10)} ${perSecond.toFixed(1).padStart(9)} /s`;
  process.stdout.write(
    [
      `${CONNECTIONS} connections, ${SECONDS} s each, bcrypt cost 10, Redis store`,
      line('logins', logins),
      line('refreshes', refreshes),
      `ratio      ${(refreshes / logins).toFixed(1).padStart(9)} × (target ≥ 20×)`,
      '',
    ].join('\n'),
  );
}

/** Requests answered per second by `CONNECTIONS` workers, each running `step(worker)` in a loop. */
async function during(
  seconds: number,
  step: (worker: number) => () => Promise<void>,
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, worker) => {
      const run = step(worker);
      while (performance.now() < until) {
        await run();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function login(url: string): Promise<{ refresh_token: string }> {
  const res = await fetch(`${url}/1/token?tenant_id=${BENCH_TENANT}`, {
    headers: { authorization: basicAuthorization() },
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /1/token: ${res.status} ${text}`);
  return JSON.parse(text) as { refresh_token: string };
}

async function refresh(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${text}`);
  return (JSON.parse(text) as { refresh_token: string }).refresh_token;
}

runMain('bench:refresh', main, teardown);
