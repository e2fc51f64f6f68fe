/**
 * Revocation propagation across instances (`npm run bench:propagation`,
 * issue 14): ten built gateways on one store — a single Redis, Sentinel (a
 * master, two replicas, three sentinels) and Cluster (three masters, two
 * replicas each) in turn — under a light background load. Each sample logs a
 * user in, has every instance accept (and cache) the token, ends it on one
 * instance (`DELETE /1/token`, or a password change every fourth sample), and
 * then asks every other instance at once, each until it refuses the token. Reported
 * per store: the time from the 204 to the first refusal on each other
 * instance (p50, p99, max), and how many requests an instance accepted after
 * the 204 (the promise is none: the instance that ends a token answers only
 * once the event has left Redis).
 *
 * Environment: BENCH_PROPAGATION_SAMPLES (per store, default 100),
 * BENCH_PROPAGATION_INSTANCES (default 10).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startRedisServer } from '../support/redis-server.js';
import { startCluster, startSentinelSet } from '../support/redis-topologies.js';
import { writeSharedGatewayFiles } from '../support/shared-gateway-files.js';
import { startEchoUpstream } from '../support/upstream.js';
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
const INSTANCES = positiveInt('BENCH_PROPAGATION_INSTANCES', 10);
const TENANT = 'prop-org';

const teardown = createTeardown();

interface Store {
  name: string;
  redis: Record<string, unknown>;
  stop(): Promise<void>;
}

interface Result {
  store: string;
  delaysMs: number[];
  acceptedAfter: number;
}

async function main(): Promise<void> {
  const upstream = await startEchoUpstream();
  teardown.add(() => upstream.close());
  const results: Result[] = [];
  const stores: (() => Promise<Store>)[] = [
    async () => {
      const redis = await startRedisServer();
      return { name: 'single Redis', redis: { url: redis.url }, stop: () => redis.stop() };
    },
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
  for (const start of stores) {
    const store = await start();
    try {
      results.push(await measure(store, upstream.url));
    } finally {
      await store.stop();
    }
  }
  const rows = results.map((r) => {
    const sorted = [...r.delaysMs].sort((a, b) => a - b);
    const at = (q: number) =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    return `${r.store.padEnd(14)} ${String(sorted.length).padStart(7)} ${at(0.5).toFixed(2).padStart(8)} ${at(0.99).toFixed(2).padStart(8)} ${(sorted.at(-1) ?? NaN).toFixed(2).padStart(8)} ${String(r.acceptedAfter).padStart(22)}`;
  });
  process.stdout.write(
    [
      '',
      `Revocation propagation: ${INSTANCES} gateways on one store, ${SAMPLES} ends per store (3 logouts : 1 password change); ${MACHINE_CORES} cores, Node ${process.version}`,
      'time from the 204 on one instance to the first refusal on each other instance, ms',
      `${'store'.padEnd(14)} ${'pairs'.padStart(7)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'accepted after the 204'.padStart(22)}`,
      ...rows,
      '',
    ].join('\n'),
  );
  if (results.some((r) => r.acceptedAfter > 0)) process.exitCode = 1;
}

async function measure(store: Store, upstreamUrl: string): Promise<Result> {
  progress(`${store.name}: starting ${INSTANCES} gateways`);
  const dir = mkdtempSync(join(tmpdir(), 'tg-propagation-'));
  const users = Array.from({ length: 4 }, (_, i) => ({
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
      const port = await findFreePort();
      const file = join(dir, `gateway-${i}.yaml`);
      writeFileSync(
        file,
        stringify({
          listen: { host: '127.0.0.1', port },
          store: { redis: { ...store.redis, keyPrefix } },
          seed: './seed.yaml',
          tokens: { keys: './keys' },
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
          log: { level: 'warn' },
        }),
      );
      const proc = spawnNode(
        `gateway ${i}`,
        ['dist/cli.js', 'serve', '--config', file],
        PROJECT_ROOT,
      );
      procs.push(proc);
      await waitForPort(proc, port, 60_000);
      urls.push(`http://127.0.0.1:${port}`);
    }
    // A light background load on every instance, as in production.
    let running = true;
    const background = urls.map(async (url) => {
      const token = await login(url, users[0] as (typeof users)[number]);
      while (running) {
        await fetch(`${url}/api/bg`, { headers: { authorization: `Bearer ${token}` } }).then((r) =>
          r.arrayBuffer(),
        );
        await new Promise((r) => setTimeout(r, 10));
      }
    });

    const delaysMs: number[] = [];
    let acceptedAfter = 0;
    for (let sample = 0; sample < SAMPLES; sample++) {
      const user = users[1 + (sample % 3)] as (typeof users)[number];
      const ender = sample % INSTANCES;
      const token = await login(urls[ender] as string, user);
      for (const url of urls) {
        const res = await get(url, token);
        if (res !== 200) throw new Error(`${url} did not accept a fresh token (${res})`);
      }
      const byPassword = sample % 4 === 3;
      const res = byPassword
        ? await changePassword(urls[ender] as string, user)
        : await fetch(`${urls[ender]}/1/token`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${token}` },
          });
      if (res.status !== 204) throw new Error(`ending the token failed: ${res.status}`);
      const endedAt = performance.now();
      // Every other instance asked at once, each until it refuses.
      await Promise.all(
        urls.map(async (url, i) => {
          if (i === ender) return;
          for (;;) {
            const status = await get(url, token);
            if (status === 401) {
              delaysMs.push(performance.now() - endedAt);
              return;
            }
            if (status === 200) acceptedAfter++;
          }
        }),
      );
      if (sample % 25 === 24) progress(`${store.name}: ${sample + 1} of ${SAMPLES}`);
    }
    running = false;
    await Promise.all(background);
    return { store: store.name, delaysMs, acceptedAfter };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
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
