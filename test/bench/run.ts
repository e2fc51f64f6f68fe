/**
 * `npm run bench` (issue 4): starts a private redis-server, an upstream, a
 * bare http-proxy and the gateway as separate processes, drives each with
 * autocannon one at a time, and prints what the gateway adds to a proxied
 * request — throughput, latency, Redis commands, memory — then the same load
 * during a login storm, and (BENCH_SOAK=1) memory over a million requests.
 *
 * Environment: BENCH_SECONDS (measured seconds per target, default 10; also
 * the number of 1 s latency rounds),
 * BENCH_ROUNDS (scenario 1's measurement is interleaved in this many slices,
 * default 5), BENCH_PROCESSES (scenario 1 is measured on this many fresh
 * sets of proxy processes, default 3), BENCH_WARMUP_SECONDS (default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_SOAK=1 (adds the soak, several
 * minutes), BENCH_PIN=1 (load generator and proxies on CPUs of their own:
 * see LOAD_CPU in processes.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer } from '../support/redis-server.js';
import { positiveInt } from './env.js';
import { BENCH_TENANT, fetchToken, REQUEST_PATH, writeGatewayFiles } from './gateway-config.js';
import type { LoadResult, LoadTarget } from './load.js';
import { measureLoginCeiling } from './login-ceiling.js';
import {
  BENCH_DIR,
  createTeardown,
  findFreePort,
  LOAD_CPU,
  MACHINE_CORES,
  pinMainThread,
  PROJECT_ROOT,
  runMain,
  PROXY_CPU,
  spawnNode,
  waitForPort,
  type BenchProcess,
} from './processes.js';
import { readRedisPid } from './redis-stats.js';
import { formatReport } from './report.js';
import { failedRuns, type BenchResults } from './results.js';
import {
  latencyScenario,
  soakScenario,
  STORM_CONNECTIONS,
  stormScenario,
  throughputScenario,
  type BenchWorld,
} from './scenarios.js';

const seconds = positiveInt('BENCH_SECONDS', 10);
const settings = {
  connections: positiveInt('BENCH_CONNECTIONS', 50),
  warmupSeconds: positiveInt('BENCH_WARMUP_SECONDS', 3),
  seconds,
  // Slices of at least a second: shorter ones would be mostly ramp-up.
  rounds: Math.min(positiveInt('BENCH_ROUNDS', 5), seconds),
  processes: positiveInt('BENCH_PROCESSES', 3),
  pinned: pinLoadGenerator(),
};
const teardown = createTeardown();
const gatewayLog: BenchResults['gatewayLog'] = [];
/** The last progress message: gateway log lines are filed under it. */
let phase = 'start-up';

async function main(): Promise<void> {
  const world = await startWorld();
  progress('timing one bcrypt compare at cost 10 (median of 5)');
  const ceiling = measureLoginCeiling(10);
  const one = await throughputScenario(world, REQUEST_PATH);
  assertAlive(world.gateway());
  const proxied = await world.proxiedTarget();
  const latency = await latencyScenario(world, proxied, REQUEST_PATH);
  assertAlive(world.gateway());
  // "Without the storm": the same gateway process's own run in scenario 1.
  const without = one.scenario.processes.at(-1)?.gateway ?? one.scenario.gateway;
  const two = await stormScenario(world, proxied, without, ceiling);
  assertAlive(world.gateway());
  const soak = process.env['BENCH_SOAK'] === '1' ? await soakScenario(world) : undefined;
  assertAlive(world.gateway());

  const results: BenchResults = {
    machine: {
      cores: MACHINE_CORES,
      cpus: cpus().length,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpu: cpus()[0]?.model ?? 'unknown',
    },
    settings: { ...settings, stormConnections: STORM_CONNECTIONS },
    throughput: one.scenario,
    latency,
    storm: two.scenario,
    ...(soak === undefined ? {} : { soak }),
    gatewayLog,
  };
  const warmupFailures = [...one.warmups, ...two.warmups].filter(
    (w: LoadResult) => w.non2xx > 0 || w.errors > 0,
  );

  process.stdout.write(`\n${formatReport(results)}\n`);
  for (const w of warmupFailures) {
    process.stdout.write(
      `FLAGGED: warm-up of ${w.name}: ${w.non2xx} non-2xx, ${w.errors} errors\n`,
    );
  }
  const file = join(mkdtempSync(join(tmpdir(), 'tg-bench-results-')), 'results.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nresults as JSON: ${file}\n`);
  if (failedRuns(results).length > 0 || warmupFailures.length > 0) process.exitCode = 1;
}

/** Starts redis-server, the upstream, the baseline proxies and the gateway, each waited for. */
async function startWorld(): Promise<BenchWorld> {
  progress('starting redis-server, upstream, baseline proxies and gateway');
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const redisPid = await readRedisPid(redis.port);
  const upstream = await startHelper('upstream', 'upstream.mjs', [], LOAD_CPU);
  const startProxy = (name: string, script: string) => (port?: number) =>
    startHelper(name, script, [upstream.url], PROXY_CPU, port);
  const startBare = startProxy('bare proxy', 'bare-proxy.mjs');
  const startKoa = startProxy('koa proxy', 'koa-proxy.mjs');
  const startHeaders = startProxy('headers proxy', 'headers-proxy.mjs');
  let bare = await startBare();
  let koa = await startKoa();
  let headers = await startHeaders();
  const port = await findFreePort();
  const files = writeGatewayFiles({ port, redisUrl: redis.url, upstream: upstream.url });
  teardown.add(() => rmSync(files.dir, { recursive: true, force: true }));
  const startGateway = async (): Promise<BenchProcess> => {
    const proc = spawnNode(
      'gateway',
      ['dist/cli.js', 'serve', '--config', files.configFile],
      PROJECT_ROOT,
      keepWarning,
    );
    teardown.add(() => proc.stop());
    await waitForPort(proc, port, 30_000);
    pin(proc.pid, PROXY_CPU);
    return proc;
  };
  let gateway = await startGateway();
  const gatewayUrl = `http://127.0.0.1:${port}`;
  /** Every server the benchmark measures, as they are now (restarts replace them). */
  const servers = () => ({
    upstream: upstream.proc,
    bare: bare.proc,
    koa: koa.proc,
    headers: headers.proc,
    gateway,
  });

  return {
    settings,
    redisPort: redis.port,
    directUrl: upstream.url,
    bareUrl: bare.url,
    koaUrl: koa.url,
    headersUrl: headers.url,
    gatewayUrl,
    gateway: () => gateway,
    pid: (server) => servers()[server].pid,
    pids: () => [redisPid, ...Object.values(servers()).map((proc) => proc.pid)],
    async proxiedTarget(): Promise<LoadTarget> {
      const token = await fetchToken(gatewayUrl);
      return {
        name: 'gateway',
        url: gatewayUrl + REQUEST_PATH,
        connections: settings.connections,
        headers: { authorization: `Bearer ${token}`, 'x-tenant-id': BENCH_TENANT },
      };
    },
    async restartGateway() {
      await gateway.stop();
      gateway = await startGateway();
    },
    async restartProxies() {
      await Promise.all([bare.proc.stop(), koa.proc.stop(), headers.proc.stop(), gateway.stop()]);
      bare = await startBare(bare.port);
      koa = await startKoa(koa.port);
      headers = await startHeaders(headers.port);
      gateway = await startGateway();
    },
    progress,
  };
}

/** Starts one of this directory's helper scripts on `port` (a free one when not given). */
async function startHelper(
  name: string,
  script: string,
  args: string[],
  cpu: number,
  port?: number,
) {
  port ??= await findFreePort();
  const proc = spawnNode(name, [join(BENCH_DIR, script), String(port), ...args], PROJECT_ROOT);
  teardown.add(() => proc.stop());
  await waitForPort(proc, port);
  pin(proc.pid, cpu);
  return { proc, port, url: `http://127.0.0.1:${port}` };
}

/** With BENCH_PIN=1, pins this process's main thread (the load generator) when the machine allows it. */
function pinLoadGenerator(): boolean {
  if (process.env['BENCH_PIN'] !== '1' || MACHINE_CORES < 2) return false;
  try {
    pinMainThread(process.pid, LOAD_CPU);
    return true;
  } catch {
    return false;
  }
}

function pin(pid: number, cpu: number): void {
  if (settings.pinned) pinMainThread(pid, cpu);
}

/** Keeps the gateway's pino lines at warn (40) or worse, and anything but its start-up banner. */
function keepWarning(line: string): void {
  const text = line.trim();
  if (text === '' || text.startsWith('tenant-gateway listening on') || text.startsWith('try:')) {
    return;
  }
  try {
    const entry = JSON.parse(text) as { level?: unknown };
    if (typeof entry.level === 'number' && entry.level < 40) return;
  } catch {
    // Not a log line (a crash, a warning from Node): keep it.
  }
  gatewayLog.push({ phase, line: text });
}

function assertAlive(proc: BenchProcess): void {
  if (proc.exited()) throw new Error(`${proc.name} exited during the benchmark:\n${proc.output()}`);
}

function progress(message: string): void {
  phase = message;
  process.stderr.write(`» ${message}\n`);
}

runMain('bench', main, teardown);
