/**
 * A failed start closes everything it opened (issue 31). The gateway starts
 * in a child process, once whole and then failing at each named step of the
 * composition root in turn (a fault injected before the step), and with real
 * faults: Redis unreachable, a key directory that cannot be loaded, a seed
 * file missing, a listener's port taken. Each time, once the start has failed
 * and while the child still runs, the test's Redis has no connection of its
 * and every port it bound is free, and it runs no more threads than a child
 * whose gateway started and closed (the password pool's worker); then the
 * child exits on its own: nothing left open holds its event loop. A failing `serve` exits 1 with the reason.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, SEED_YAML } from '../support/gateway-process.js';
import { makeKeysDir, uniquePrefix } from '../support/gateway.js';
import { findFreePort, findFreeServerPort } from '../support/ports.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

const CHILD = resolve(import.meta.dirname, 'start-child.mjs');
/** Every step of a start, in order (`createGateway`, then `listen`). */
const STEPS = [
  'metrics',
  'proxy-settings',
  'tracing',
  'core',
  'seed',
  'readiness',
  'rate-limits',
  'listeners',
  'forwarder',
  'websockets',
  'federation',
  'reload',
  'handlers',
  'ext-authz',
  'listen',
];
const START_TIMEOUT_MS = 40_000;
/** How long a child may take to exit once its stdin has ended. */
const EXIT_WITHIN_MS = 5_000;

let redis: TestRedisServer;
let client: Redis;
let dir: string;
let keysDir: string;
let ports: { listen: number; admin: number; forwardAuth: number; otlp: number };
/**
 * The threads of a child that started whole and closed: the password pool's
 * worker, a thread of its own, stays unless closed (it does not keep the
 * process alive, so only its count shows it).
 */
let baseThreads: number | undefined;
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
});

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  redis = await startRedisServer();
  client = new Redis(redis.url);
  dir = mkdtempSync(join(tmpdir(), 'tg-failed-start-'));
  keysDir = (await makeKeysDir()).dir;
  writeFileSync(join(dir, 'seed.yaml'), SEED_YAML);
  // Below the ephemeral range: the suite holds these ports unbound for
  // minutes between starts, and an outgoing connection of a test in another
  // worker could take an ephemeral one meanwhile ("still bound").
  const [listen, admin, forwardAuth, otlp] = [
    await findFreeServerPort(),
    await findFreeServerPort(),
    await findFreeServerPort(),
    await findFreeServerPort(),
  ];
  ports = { listen: listen!, admin: admin!, forwardAuth: forwardAuth!, otlp: otlp! };
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

/** A config that opens every part: Redis, the password pool, tracing, three listeners, a rate-limited route. */
function fullConfig(change: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: ports.listen },
    admin: { host: '127.0.0.1', port: ports.admin, configReload: true },
    forwardAuth: { host: '127.0.0.1', port: ports.forwardAuth },
    store: { redis: { url: redis.url, keyPrefix: uniquePrefix() } },
    tokens: { keys: keysDir },
    passwords: { bcryptCost: 4 },
    seed: join(dir, 'seed.yaml'),
    tracing: { enabled: true, otlpEndpoint: `http://127.0.0.1:${ports.otlp}/v1/traces` },
    routes: [
      {
        prefix: '/a',
        upstream: `http://127.0.0.1:${ports.otlp}`,
        rateLimit: { perTenant: { requestsPerSecond: 5, burst: 5 } },
      },
    ],
    ...change,
  };
}

interface Started {
  /** The `step` lines, in order. */
  steps: string[];
  /** `started`, or `start failed: <message>`. */
  outcome: string;
  /** The child's threads once the start has failed (or the gateway has closed). */
  threads: number;
  /** Ends the child's stdin; resolves with its exit code, or `hung` when it did not exit on its own. */
  finish(): Promise<number | null | 'hung'>;
  output(): string;
}

function startInChild(raw: Record<string, unknown>, failAt = ''): Promise<Started> {
  const child = spawn(process.execPath, [CHILD], {
    env: {
      PATH: process.env['PATH'] ?? '',
      TG_CONFIG: JSON.stringify(raw),
      TG_FAIL_AT: failAt,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const output = () => `${out}\n${err}`;
  const finish = async (): Promise<number | null | 'hung'> => {
    child.stdin.end();
    const timer = new Promise<'hung'>((done) => setTimeout(() => done('hung'), EXIT_WITHIN_MS));
    const result = await Promise.race([exited, timer]);
    if (result === 'hung') child.kill('SIGKILL');
    return result;
  };
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child did not finish its start:\n${output()}`));
    }, START_TIMEOUT_MS);
    void exited.then((code) => reject(new Error(`the child exited (${code}) early:\n${output()}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n');
      if (!lines.includes('waiting')) return;
      clearTimeout(timer);
      const steps = lines.flatMap((l) => (l.startsWith('step ') ? [l.slice(5)] : []));
      const outcome = lines.find((l) => l === 'started' || l.startsWith('start failed: '));
      const threads = Number(lines.find((l) => l.startsWith('threads '))?.slice(8));
      resolveStart({ steps, outcome: outcome ?? '', threads, finish, output });
    });
  });
}

/** The connections to the test's Redis other than the test's own, polled until none (or 3 s). */
async function otherRedisClients(): Promise<string[]> {
  const own = String(await client.client('ID'));
  const deadline = Date.now() + 3_000;
  for (;;) {
    const list = String(await client.client('LIST'))
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith(`id=${own} `));
    if (list.length === 0 || Date.now() > deadline) return list;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** What a start that ended (failed, or started and closed) must have left: nothing. */
async function expectNothingLeft(started: Started, exitCode: number, taken: number[] = []) {
  const context = started.output();
  expect(await otherRedisClients(), context).toEqual([]);
  if (baseThreads === undefined)
    throw new Error('no thread count of a whole start to compare with');
  expect(started.threads, `threads left\n${context}`).toBeLessThanOrEqual(baseThreads);
  for (const port of [ports.listen, ports.admin, ports.forwardAuth].filter(
    (p) => !taken.includes(p),
  ))
    expect(await isFree(port), `port ${port} still bound\n${context}`).toBe(true);
  expect(await started.finish(), `exit on its own\n${started.output()}`).toBe(exitCode);
}

it(
  'a whole start runs every named step, and close leaves nothing open',
  async () => {
    const started = await startInChild(fullConfig());
    expect(started.outcome, started.output()).toBe('started');
    expect(started.steps).toEqual(STEPS);
    baseThreads = started.threads;
    await expectNothingLeft(started, 0);
  },
  START_TIMEOUT_MS * 2,
);

describe('a start failing at each step in turn closes everything it had opened', () => {
  it.each(STEPS)(
    'fails at %s',
    async (step) => {
      const started = await startInChild(fullConfig(), step);
      expect(started.outcome, started.output()).toBe(`start failed: fault injected at ${step}`);
      expect(started.steps).toEqual(STEPS.slice(0, STEPS.indexOf(step) + 1));
      await expectNothingLeft(started, 3);
    },
    START_TIMEOUT_MS * 2,
  );
});

describe('real faults', () => {
  it(
    'Redis unreachable: nothing is left of the attempt',
    async () => {
      const url = `redis://127.0.0.1:${await findFreePort()}`;
      const started = await startInChild(
        fullConfig({ store: { redis: { url, connectTimeoutMs: 300 } } }),
      );
      expect(started.outcome).toMatch(/^start failed: Cannot connect to Redis/);
      expect(started.steps.at(-1)).toBe('core');
      await expectNothingLeft(started, 3);
    },
    START_TIMEOUT_MS * 2,
  );

  it(
    'a key directory that cannot be loaded, after the store was opened: the store is closed',
    async () => {
      const badKeys = mkdtempSync(join(tmpdir(), 'tg-bad-keys-'));
      writeFileSync(join(badKeys, 'broken.pem'), 'not a key');
      const started = await startInChild(fullConfig({ tokens: { keys: badKeys } }));
      expect(started.outcome).toMatch(/^start failed: .*broken\.pem: not a PEM private key/);
      expect(started.steps.at(-1)).toBe('core');
      await expectNothingLeft(started, 3);
    },
    START_TIMEOUT_MS * 2,
  );

  it(
    'a seed file missing, after the store and the password pool were opened',
    async () => {
      const started = await startInChild(fullConfig({ seed: join(dir, 'missing.yaml') }));
      expect(started.outcome).toMatch(/^start failed: .*missing\.yaml/);
      expect(started.steps.at(-1)).toBe('seed');
      await expectNothingLeft(started, 3);
    },
    START_TIMEOUT_MS * 2,
  );

  it(
    "the admin listener's port taken, after the main and forward-auth listeners bound theirs",
    async () => {
      const holder = await hold(ports.admin);
      try {
        const started = await startInChild(fullConfig());
        expect(started.outcome).toBe(
          `start failed: Cannot listen on 127.0.0.1:${ports.admin} (admin): the port is taken.`,
        );
        expect(started.steps.at(-1)).toBe('listen');
        await expectNothingLeft(started, 3, [ports.admin]);
      } finally {
        await new Promise((r) => holder.close(r));
      }
    },
    START_TIMEOUT_MS * 2,
  );
});

it(
  'serve: a listener that cannot bind exits 1 with the reason on stderr, no stack, no hang',
  async () => {
    const holder = await hold(ports.listen);
    try {
      const config = join(dir, 'serve.yaml');
      const { redis: store, ...rest } = fullConfig().store as { redis: unknown };
      writeFileSync(
        config,
        JSON.stringify({ ...fullConfig({ store: { ...rest, redis: store } }) }),
      );
      const run = await runCli(['serve', '--config', config]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toBe(
        `error: unavailable: Cannot listen on 127.0.0.1:${ports.listen} (listen): the port is taken.\n`,
      );
      expect(await otherRedisClients()).toEqual([]);
    } finally {
      await new Promise((r) => holder.close(r));
    }
  },
  START_TIMEOUT_MS,
);

function hold(port: number): Promise<Server> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done(server));
  });
}

/** `node dist/cli.js …`, killed (code `null`) when it has not exited within 20 s. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((done) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    }),
  );
}
