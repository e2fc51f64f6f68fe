/**
 * `npm run bench` (issues 4 and 13): starts a private redis-server, an
 * upstream, the bare Node proxies (http-proxy-3, alone, in Koa, with the
 * gateway's headers; undici), the C peers (nginx, HAProxy with jwt_verify;
 * each skipped, said so, where not installed) and the gateway as separate
 * processes, drives each with autocannon one at a time, and prints what the
 * gateway costs beside them — throughput, latency, CPU per request, Redis
 * commands, memory — then the same load during a login storm, and
 * (BENCH_SOAK=1) memory over a million requests. The gateway runs with the
 * image's Node flags (image-flags.ts), and its peak RSS is reported beside
 * the rest: what a container's memory limit is held against.
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
import { startRedisServer } from '../test/support/redis-server.js';
import { positiveInt } from './env.js';
import { BENCH_TENANT, fetchToken, REQUEST_PATH, writeGatewayFiles } from './gateway-config.js';
import type { LoadResult, LoadTarget } from './load.js';
import { measureLoginCeiling } from './login-ceiling.js';
import { buildTakesApiKeys, machineClientScenario } from './machine-clients.js';
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
import { imageNodeFlags } from './image-flags.js';
import { childPids } from './cpu-usage.js';
import { haproxyPeer, nginxPeer, type Peer } from './peers.js';
import { failedRuns, TARGETS, type BenchResults, type TargetKey } from './results.js';
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
  // What the image runs: its ENTRYPOINT's Node flags (the young generation's size).
  gatewayNodeFlags: imageNodeFlags(),
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
  const without = one.scenario.processes.at(-1)?.gateway ?? one.scenario.totals.gateway;
  if (without === undefined) throw new Error('scenario 1 made no gateway run');
  const two = await stormScenario(world, proxied, without, ceiling);
  assertAlive(world.gateway());
  // After the storm: it restarts the gateway, and the storm compares with scenario 1's process.
  const four = await machineClientScenario(world, STORM_CONNECTIONS);
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
    machineClients: four.scenario,
    ...(soak === undefined ? {} : { soak }),
    gatewayLog,
  };
  const warmupFailures = [...one.warmups, ...two.warmups, ...four.warmups].filter(
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

/** Starts redis-server, the upstream, the baseline proxies, the peers and the gateway, each waited for. */
async function startWorld(): Promise<BenchWorld> {
  progress('starting redis-server, upstream, baseline proxies, peers and gateway');
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const redisPid = await readRedisPid(redis.port);
  const upstream = await startHelper('upstream', 'upstream.mjs', [], LOAD_CPU);
  const port = await findFreePort();
  const files = writeGatewayFiles({
    port,
    redisUrl: redis.url,
    upstream: upstream.url,
    apiKeys: buildTakesApiKeys(),
  });
  teardown.add(() => rmSync(files.dir, { recursive: true, force: true }));

  // How each proxy is started, and started again on the port it had.
  const helper =
    (name: string, script: string): StartFn =>
    (at) =>
      startHelper(name, script, [upstream.url], PROXY_CPU, at);
  const peer =
    (p: Peer): StartFn =>
    async (at) => {
      at ??= await findFreePort();
      const proc = await p.start(at, upstream.url);
      teardown.add(() => proc.stop());
      // nginx serves from its worker, forked before this: pin that too.
      for (const pid of [proc.pid, ...childPids(proc.pid)]) pin(pid, PROXY_CPU);
      return { proc, port: at, url: `http://127.0.0.1:${at}` };
    };
  const gatewayStart = async (): Promise<Started> => {
    const proc = spawnNode(
      'gateway',
      [...settings.gatewayNodeFlags, 'dist/cli.js', 'serve', '--config', files.configFile],
      PROJECT_ROOT,
      keepWarning,
    );
    teardown.add(() => proc.stop());
    await waitForPort(proc, port, 30_000);
    pin(proc.pid, PROXY_CPU);
    return { proc, port, url: `http://127.0.0.1:${port}` };
  };
  const skipped: string[] = [];
  const peers: string[] = [];
  const starters: Partial<Record<TargetKey, StartFn>> = {};
  for (const p of [nginxPeer(), haproxyPeer(files.publicKeyFile)]) {
    if (p.binary === undefined) {
      skipped.push(p.missing);
      progress(`SKIPPED ${p.missing}`);
    } else {
      peers.push(p.version());
      starters[p.name as 'nginx' | 'haproxy'] = peer(p);
    }
  }
  starters.bare = helper('bare proxy', 'bare-proxy.mjs');
  starters.koa = helper('koa proxy', 'koa-proxy.mjs');
  starters.headers = helper('headers proxy', 'headers-proxy.mjs');
  starters.undici = helper('bare undici', 'bare-undici.mjs');
  starters.gateway = gatewayStart;

  const running: Partial<Record<TargetKey, Started>> = { direct: upstream };
  for (const [key, start] of Object.entries(starters)) {
    running[key as TargetKey] = await start();
  }
  const get = (key: TargetKey): Started => {
    const it = running[key];
    if (it === undefined) throw new Error(`${key}: not running`);
    return it;
  };
  const gatewayUrl = get('gateway').url;

  return {
    settings,
    redisPort: redis.port,
    configFile: files.configFile,
    targets: TARGETS.filter(({ key }) => running[key] !== undefined).map(({ key, name }) => ({
      key,
      name,
      url: get(key).url,
    })),
    skipped,
    peers,
    bareUrl: get('bare').url,
    gatewayUrl,
    gateway: () => get('gateway').proc,
    pid: (key) => get(key).proc.pid,
    pids: () => [redisPid, ...Object.values(running).map(({ proc }) => proc.pid)],
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
      await get('gateway').proc.stop();
      running.gateway = await gatewayStart();
    },
    async restartProxies() {
      const keys = Object.keys(starters) as TargetKey[];
      await Promise.all(keys.map((key) => get(key).proc.stop()));
      for (const key of keys) running[key] = await (starters[key] as StartFn)(get(key).port);
    },
    progress,
  };
}

/** Starts a proxy on port `at` (a free one when not given). */
type StartFn = (at?: number) => Promise<Started>;

/** A server the benchmark started, where it listens. */
interface Started {
  proc: BenchProcess;
  port: number;
  url: string;
}

/** Starts one of this directory's helper scripts on `port` (a free one when not given). */
async function startHelper(
  name: string,
  script: string,
  args: string[],
  cpu: number,
  port?: number,
): Promise<Started> {
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
