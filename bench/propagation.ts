/**
 * Revocation propagation across instances (`npm run bench:propagation`):
 * ten built gateways on one store under a light background load. Each sample
 * logs a user in, has every instance accept (and cache) the token, ends it on
 * one instance (`DELETE /1/token`, or a password change every fourth sample),
 * and then asks every other instance at once, each until it refuses the
 * token. Reported per row: the 204's own time (what lease mode adds), the
 * time from the 204 to the first refusal on each other instance (p50, p99,
 * max), and how many requests an instance accepted after the 204.
 *
 * Rows: plain mode on a single Redis (the baseline of the 204's time), then
 * lease mode (the default) on a single Redis, Sentinel (a master, two
 * replicas, three sentinels) and Cluster (three masters, two replicas each);
 * then a single Redis with three of the ten instances behind links adding
 * 200 ms each way (a relay in this process), in plain mode — where the slow
 * instances accept the old token for about their delay — and in lease mode,
 * where none may (the promise: 0; a non-zero count fails the run). The
 * slow-link rows run 8 samples at a time, each worker with a user of its own.
 *
 * Environment: BENCH_PROPAGATION_SAMPLES (per store row, default 100),
 * BENCH_PROPAGATION_LINK_SAMPLES (per slow-link row, default 1000),
 * BENCH_PROPAGATION_INSTANCES (default 10), BENCH_PROPAGATION_ONLY=links (the
 * slow-link rows alone).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startRedisServer } from '../test/support/redis-server.js';
import { startCluster, startSentinelSet } from '../test/support/redis-topologies.js';
import { writeSharedGatewayFiles } from '../test/support/shared-gateway-files.js';
import { startTcpRelay } from '../test/support/tcp-relay.js';
import { startEchoUpstream } from '../test/support/upstream.js';
import { positiveInt } from './env.js';
import {
  createTeardown,
  findFreePort,
  MACHINE_CORES,
  PROJECT_ROOT,
  runMain,
  spawnNode,
  waitForPort,
} from './processes.js';

const SAMPLES = positiveInt('BENCH_PROPAGATION_SAMPLES', 100);
const LINK_SAMPLES = positiveInt('BENCH_PROPAGATION_LINK_SAMPLES', 1000);
/** `BENCH_PROPAGATION_ONLY=links`: the slow-link rows alone. */
const ONLY_LINKS = process.env['BENCH_PROPAGATION_ONLY'] === 'links';
const INSTANCES = positiveInt('BENCH_PROPAGATION_INSTANCES', 10);
const TENANT = 'prop-org';
/** Slow-link rows: how many instances sit behind a slow link, its one-way delay, samples at a time. */
const SLOW_INSTANCES = 3;
const SLOW_LINK_MS = 200;
const LINK_PARALLEL = 8;

const teardown = createTeardown();

interface Store {
  name: string;
  redis: Record<string, unknown>;
  /** The port of the one Redis (single Redis only): slow links relay to it. */
  port?: number;
  stop(): Promise<void>;
}

interface Scenario {
  mode: 'lease' | 'plain';
  samples: number;
  /** Instances whose Redis connections go through a link adding `SLOW_LINK_MS` each way. */
  slow: number;
  /** Samples at a time. */
  parallel: number;
}

interface Result {
  row: string;
  endMs: number[];
  delaysMs: number[];
  acceptedAfter: number;
  /** Background requests that failed outright (no answer). */
  backgroundErrors: number;
}

async function main(): Promise<void> {
  const upstream = await startEchoUpstream();
  teardown.add(() => upstream.close());
  const results: Result[] = [];
  const single = async (): Promise<Store> => {
    const redis = await startRedisServer();
    return {
      name: 'single Redis',
      redis: { url: redis.url },
      port: redis.port,
      stop: () => redis.stop(),
    };
  };
  const stores: (() => Promise<Store>)[] = [
    single,
    async () => {
      const set = await startSentinelSet();
      return {
        name: 'Sentinel',
        redis: { sentinel: { name: set.name, nodes: set.sentinels } },
        stop: () => set.stop(),
      };
    },
    async () => {
      const cluster = await startCluster();
      return {
        name: 'Cluster',
        redis: { cluster: { nodes: cluster.nodes } },
        stop: () => cluster.stop(),
      };
    },
  ];
  const lease: Scenario = { mode: 'lease', samples: SAMPLES, slow: 0, parallel: 1 };
  // The baseline of what lease mode adds to the 204: plain mode on the same links.
  const plain: Scenario = { ...lease, mode: 'plain' };
  const plan: [() => Promise<Store>, Scenario][] = [
    [single, plain],
    ...stores.map((start): [() => Promise<Store>, Scenario] => [start, lease]),
  ];
  for (const [start, scenario] of ONLY_LINKS ? [] : plan) {
    const store = await start();
    try {
      results.push(await measure(store, scenario, upstream.url));
    } finally {
      await store.stop();
    }
  }
  for (const mode of ['plain', 'lease'] as const) {
    const store = await single();
    try {
      const scenario = {
        mode,
        samples: LINK_SAMPLES,
        slow: SLOW_INSTANCES,
        parallel: LINK_PARALLEL,
      };
      results.push(await measure(store, scenario, upstream.url));
    } finally {
      await store.stop();
    }
  }
  const ms = (values: number[], q: number | 'max') => {
    const sorted = [...values].sort((a, b) => a - b);
    const at =
      q === 'max'
        ? sorted.at(-1)
        : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return (at ?? NaN).toFixed(1).padStart(7);
  };
  const rows = results.map(
    (r) =>
      `${r.row.padEnd(34)} ${String(r.endMs.length).padStart(6)} ${ms(r.endMs, 0.5)} ${ms(r.endMs, 0.99)}  ${String(r.delaysMs.length).padStart(6)} ${ms(r.delaysMs, 0.5)} ${ms(r.delaysMs, 0.99)} ${ms(r.delaysMs, 'max')} ${String(r.acceptedAfter).padStart(9)}${r.backgroundErrors > 0 ? `  (${r.backgroundErrors} background requests failed)` : ''}`,
  );
  process.stdout.write(
    [
      '',
      `Revocation propagation: ${INSTANCES} gateways on one store (3 logouts : 1 password change); ${MACHINE_CORES} cores, Node ${process.version}`,
      `"slow": ${SLOW_INSTANCES} of the instances reach Redis over a link adding ${SLOW_LINK_MS} ms each way`,
      `${''.padEnd(34)} ${'the 204, ms'.padStart(22)}  ${'204 → refused on each other instance, ms'.padStart(38)} ${'accepted'.padStart(9)}`,
      `${'store, mode'.padEnd(34)} ${'ends'.padStart(6)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}  ${'pairs'.padStart(6)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)} ${'after 204'.padStart(9)}`,
      ...rows,
      '',
    ].join('\n'),
  );
  // Lease mode's promise is none accepted, whatever the links; plain mode's only on equal links.
  const broken = results.filter((r) => r.acceptedAfter > 0 && !r.row.includes('plain'));
  if (broken.length > 0) process.exitCode = 1;
}

async function measure(store: Store, scenario: Scenario, upstreamUrl: string): Promise<Result> {
  const row = `${store.name}, ${scenario.mode}${scenario.slow > 0 ? `, ${scenario.slow} slow` : ''}`;
  progress(`${row}: starting ${INSTANCES} gateways`);
  const dir = mkdtempSync(join(tmpdir(), 'tg-propagation-'));
  // users[0] for the background load; one per worker, so a password change ends only its own tokens.
  const users = Array.from({ length: 1 + scenario.parallel }, (_, i) => ({
    email: `prop-${i}@example.com`,
    password: `prop-password-${i}-0`,
    id: '',
  }));
  await writeSharedGatewayFiles(dir, users, { id: TENANT, name: 'Propagation' });
  const keyPrefix = `prop-${Date.now()}:`;
  const urls: string[] = [];
  const procs = [];
  try {
    for (let i = 0; i < INSTANCES; i++) {
      const slow = i >= INSTANCES - scenario.slow;
      let redis = store.redis;
      if (slow) {
        if (store.port === undefined) throw new Error('slow links need a single Redis');
        const relay = await startTcpRelay(store.port, { delayMs: SLOW_LINK_MS });
        teardown.add(() => relay.close());
        redis = { url: relay.url };
      }
      const port = await findFreePort();
      const file = join(dir, `gateway-${i}.yaml`);
      writeFileSync(
        file,
        stringify({
          listen: { host: '127.0.0.1', port },
          store: { redis: { ...redis, keyPrefix } },
          // Seeded by the first instance; one behind a slow link would take seconds.
          ...(i === 0 ? { seed: './seed.yaml' } : {}),
          tokens: { keys: './keys' },
          revocation: { mode: scenario.mode },
          passwords: { bcryptCost: 4, workers: 1 },
          limits: {
            login: {
              perEmail: 1_000_000,
              perIp: 1_000_000,
              maxQueuedPerEmail: 1000,
              maxQueuedPerIp: 1000,
            },
          },
          routes: [{ prefix: '/api', upstream: upstreamUrl }],
          log: { level: process.env['BENCH_PROPAGATION_LOG'] ?? 'warn' },
        }),
      );
      // Log lines (warnings and worse at this level) and any crash are the run's business.
      const proc = spawnNode(
        `gateway ${i}`,
        ['dist/cli.js', 'serve', '--config', file],
        PROJECT_ROOT,
        (line) => {
          if (line.trim() !== '' && !/listening on|^try: /.test(line.trim()))
            process.stderr.write(`[gateway ${i}] ${line}\n`);
        },
      );
      procs.push(proc);
      await waitForPort(proc, port, 60_000);
      urls.push(`http://127.0.0.1:${port}`);
    }
    const result: Result = { row, endMs: [], delaysMs: [], acceptedAfter: 0, backgroundErrors: 0 };
    // A light background load on every instance, as in production.
    let running = true;
    const background = urls.map(async (url) => {
      const token = await login(urls[0] as string, users[0] as (typeof users)[number]);
      while (running) {
        await fetch(`${url}/api/bg`, { headers: { authorization: `Bearer ${token}` } })
          .then((r) => r.arrayBuffer())
          .catch((err: unknown) => {
            // Counted and shown, not fatal: the row's figures stand, with this beside them.
            result.backgroundErrors++;
            progress(
              `${row}: background request to ${url} failed: ${String(err)} (${String((err as Error).cause)})`,
            );
          });
        await new Promise((r) => setTimeout(r, 10));
      }
    });

    let next = 0;
    const worker = async (user: (typeof users)[number]) => {
      for (let sample = next++; sample < scenario.samples; sample = next++) {
        await measureOne(urls, user, sample, result);
        if (sample % 100 === 99) progress(`${row}: ${sample + 1} of ${scenario.samples}`);
      }
    };
    await Promise.all(users.slice(1).map(worker));
    running = false;
    await Promise.all(background);
    return result;
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One sample: a token accepted everywhere, ended on one instance, then asked of every other until refused. */
async function measureOne(
  urls: readonly string[],
  user: { email: string; password: string; id: string },
  sample: number,
  result: Result,
): Promise<void> {
  const ender = urls[sample % urls.length] as string;
  const token = await login(urls[0] as string, user);
  for (const url of urls) {
    const res = await get(url, token);
    if (res !== 200) throw new Error(`${url} did not accept a fresh token (${res})`);
  }
  const byPassword = sample % 4 === 3;
  const started = performance.now();
  const res = byPassword
    ? await changePassword(ender, user)
    : await fetch(`${ender}/1/token`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
  if (res.status !== 204) throw new Error(`ending the token failed: ${res.status}`);
  const endedAt = performance.now();
  result.endMs.push(endedAt - started);
  // Every other instance asked at once, each until it refuses.
  await Promise.all(
    urls.map(async (url) => {
      if (url === ender) return;
      for (;;) {
        const status = await get(url, token);
        if (status === 401) {
          result.delaysMs.push(performance.now() - endedAt);
          return;
        }
        if (status === 200) result.acceptedAfter++;
      }
    }),
  );
}

async function login(
  url: string,
  user: { email: string; password: string; id: string },
): Promise<string> {
  const res = await fetch(`${url}/1/token?tenant_id=${TENANT}`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${user.email}:${user.password}`).toString('base64')}`,
    },
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const token = ((await res.json()) as { access_token: string }).access_token;
  user.id ||= (
    JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
      sub: string;
    }
  ).sub;
  return token;
}

async function changePassword(url: string, user: { email: string; password: string; id: string }) {
  const next = `prop-password-${Math.random().toString(36).slice(2, 10)}`;
  const res = await fetch(`${url}/1/users/${user.id}/password`, {
    method: 'PUT',
    headers: {
      authorization: `Basic ${Buffer.from(`${user.email}:${user.password}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ password: next }),
  });
  if (res.status === 204) user.password = next;
  return res;
}

async function get(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/api/x`, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

function progress(message: string): void {
  process.stderr.write(`» ${message}\n`);
}

runMain('propagation', main, teardown);
