/**
 * `npm run bench:memory` (issue 30): the gateway's memory under saturating
 * load, on the Node that runs this script, with and without the Node flags
 * the image starts it with (the Dockerfile's ENTRYPOINT, `image-flags.ts`).
 * Each run is a fresh gateway (Redis store, the bench's route, token and
 * bcrypt cost 10): a warm-up, then BENCH_CONNECTIONS proxied connections
 * for MEMORY_SECONDS, then the same beside a login storm (GET /1/token,
 * Basic, STORM_CONNECTIONS connections: every bcrypt worker busy) for as
 * long. The variants alternate run by run, so a noisy neighbour falls on
 * each. Reported per run: proxied requests/s of each phase, the peak RSS
 * after each (`VmHWM`: the most the kernel ever held for the process,
 * what a container's limit is held against; sampling could miss it), and
 * the most each V8 space of the main thread committed (its /metrics, read
 * every second: which part grew).
 *
 * Node sizes V8's heap from the memory it may use: MEMORY_LIMIT_MB=256
 * runs each gateway seeing the Deployment's limit as it would in its pod
 * (`container-limit.ts`: root only; nothing enforces the limit here).
 *
 * Another Node: `PATH=<dir>/node_modules/.bin:$PATH npm run bench:memory`
 * after `npm install --prefix <dir> --no-save node@24` (the gateway runs
 * on the Node that runs this script).
 *
 * Environment: BENCH_CONNECTIONS (default 32), MEMORY_SECONDS (default
 * 15), MEMORY_RUNS (runs per variant, default 3), BENCH_WARMUP_SECONDS
 * (default 3), MEMORY_LIMIT_MB (unset: the machine's RAM), MEMORY_WORKERS
 * (bcrypt worker threads, default one less than the cores), MEMORY_VARIANTS
 * (the variants, `|`-separated, each a space-separated list of Node flags
 * or `none`; default `none|` and the image's flags).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startRedisServer } from '../test/support/redis-server.js';
import { underMemoryLimit } from './container-limit.js';
import { processCpuSeconds } from './cpu-usage.js';
import { positiveInt } from './env.js';
import {
  basicAuthorization,
  BENCH_TENANT,
  fetchToken,
  PASSWORD_WORKERS,
  REQUEST_PATH,
  writeGatewayFiles,
} from './gateway-config.js';
import { imageNodeFlags } from './image-flags.js';
import { drive, summarize, type LoadTarget } from './load.js';
import {
  BENCH_DIR,
  createTeardown,
  findFreePort,
  peakRssMb,
  PROJECT_ROOT,
  runMain,
  sleep,
  spawnNode,
  spawnProcess,
  waitForPort,
} from './processes.js';
import { STORM_CONNECTIONS } from './scenarios.js';

const settings = {
  connections: positiveInt('BENCH_CONNECTIONS', 32),
  seconds: positiveInt('MEMORY_SECONDS', 15),
  runs: positiveInt('MEMORY_RUNS', 3),
  warmupSeconds: positiveInt('BENCH_WARMUP_SECONDS', 3),
  workers: positiveInt('MEMORY_WORKERS', PASSWORD_WORKERS),
  limitMb: process.env['MEMORY_LIMIT_MB'] ? positiveInt('MEMORY_LIMIT_MB', 1) : undefined,
};
const teardown = createTeardown();

/** What one run measured. */
interface MemoryRun {
  variant: string;
  /** Proxied requests/s alone, then beside the login storm. */
  proxiedPerSecond: number;
  /** The gateway's CPU time (all threads) per proxied request alone, µs: steadier than req/s on a shared machine. */
  cpuUsPerRequest: number;
  stormProxiedPerSecond: number;
  loginsPerSecond: number;
  /** Peak RSS (MB) after the proxied load, then after the storm. */
  peakRssMb: number;
  stormPeakRssMb: number;
  /** The most each V8 space of the main thread committed (MB). */
  spacesMb: Record<string, number>;
  failures: number;
}

async function main(): Promise<void> {
  const variants = (process.env['MEMORY_VARIANTS'] ?? `none|${imageNodeFlags().join(' ')}`)
    .split('|')
    .map((v) =>
      v
        .trim()
        .split(/\s+/)
        .filter((f) => f !== '' && f !== 'none'),
    )
    .map((flags) => ({ name: flags.join(' ') || 'no flags', flags }));
  progress(`node ${process.version}; variants: ${variants.map((v) => v.name).join(' | ')}`);
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const upstreamPort = await findFreePort();
  const upstream = spawnNode(
    'upstream',
    [join(BENCH_DIR, 'upstream.mjs'), String(upstreamPort)],
    PROJECT_ROOT,
  );
  teardown.add(() => upstream.stop());
  await waitForPort(upstream, upstreamPort);

  const runs: MemoryRun[] = [];
  for (let i = 1; i <= settings.runs; i++) {
    for (const variant of variants) {
      progress(`run ${i}/${settings.runs}: ${variant.name}`);
      runs.push(
        await measure(variant.name, variant.flags, redis.url, `http://127.0.0.1:${upstreamPort}`),
      );
    }
  }
  process.stdout.write(`\n${format(runs)}\n`);
  if (runs.some((r) => r.failures > 0)) process.exitCode = 1;
}

/** One fresh gateway started with `flags`: warmed up, loaded, then loaded beside a login storm. */
async function measure(
  variant: string,
  flags: string[],
  redisUrl: string,
  upstream: string,
): Promise<MemoryRun> {
  const port = await findFreePort();
  const adminPort = await findFreePort();
  const files = writeGatewayFiles({
    port,
    adminPort,
    redisUrl,
    upstream,
    passwordWorkers: settings.workers,
  });
  const argv = [...flags, 'dist/cli.js', 'serve', '--config', files.configFile];
  const gateway =
    settings.limitMb === undefined
      ? spawnNode('gateway', argv, PROJECT_ROOT)
      : spawnProcess(
          'gateway',
          ...underMemoryLimit(settings.limitMb, process.execPath, argv),
          PROJECT_ROOT,
        );
  const spacesMb: Record<string, number> = {};
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const text = await fetch(`http://127.0.0.1:${adminPort}/metrics`).then(
        (r) => r.text(),
        () => '', // not listening yet
      );
      for (const [, space, bytes] of text.matchAll(
        /^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\d+)/gm,
      )) {
        const mb = Number(bytes) / 2 ** 20;
        spacesMb[space as string] = Math.max(spacesMb[space as string] ?? 0, mb);
      }
      await sleep(1000);
    }
  })();
  try {
    await waitForPort(gateway, port, 30_000);
    await waitForPort(gateway, adminPort);
    const url = `http://127.0.0.1:${port}`;
    const proxied: LoadTarget = {
      name: 'proxied',
      url: url + REQUEST_PATH,
      connections: settings.connections,
      headers: { authorization: `Bearer ${await fetchToken(url)}`, 'x-tenant-id': BENCH_TENANT },
    };
    const logins: LoadTarget = {
      name: 'GET /1/token',
      url: `${url}/1/token?tenant_id=${BENCH_TENANT}`,
      connections: STORM_CONNECTIONS,
      headers: { authorization: basicAuthorization() },
    };
    const length = { seconds: settings.seconds };
    await drive(proxied, { seconds: settings.warmupSeconds });
    const cpuBefore = processCpuSeconds(gateway.pid);
    const alone = summarize('proxied', [await drive(proxied, length)]);
    const cpuUsPerRequest = ((processCpuSeconds(gateway.pid) - cpuBefore) * 1e6) / alone.completed;
    const peak = peakRssMb(gateway.pid);
    const [withStorm, storm] = await Promise.all([drive(proxied, length), drive(logins, length)]);
    const during = summarize('proxied during storm', [withStorm]);
    const tokens = summarize('logins', [storm]);
    return {
      variant,
      proxiedPerSecond: alone.requestsPerSecond,
      cpuUsPerRequest,
      stormProxiedPerSecond: during.requestsPerSecond,
      loginsPerSecond: tokens.requestsPerSecond,
      peakRssMb: peak,
      stormPeakRssMb: peakRssMb(gateway.pid),
      spacesMb,
      failures: [alone, during, tokens].reduce((n, r) => n + r.non2xx + r.errors, 0),
    };
  } finally {
    sampling = false;
    await sampler;
    await gateway.stop();
    rmSync(files.dir, { recursive: true, force: true });
  }
}

function format(runs: MemoryRun[]): string {
  const spaces = ['new', 'old', 'code', 'large_object'];
  const header = [
    'variant',
    'proxied req/s',
    'CPU µs/req',
    'peak RSS MB',
    'proxied req/s (storm)',
    'logins/s',
    'peak RSS MB (storm)',
    ...spaces.map((s) => `${s} MB`),
    'failed',
  ];
  const rows = runs.map((r) => [
    r.variant,
    r.proxiedPerSecond.toFixed(0),
    r.cpuUsPerRequest.toFixed(0),
    r.peakRssMb.toFixed(0),
    r.stormProxiedPerSecond.toFixed(0),
    r.loginsPerSecond.toFixed(1),
    r.stormPeakRssMb.toFixed(0),
    ...spaces.map((s) => (r.spacesMb[s] ?? 0).toFixed(1)),
    String(r.failures),
  ]);
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] as string).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const limit =
    settings.limitMb === undefined ? 'no memory limit' : `seeing a ${settings.limitMb} MB limit`;
  return [
    `gateway memory: node ${process.version}, ${limit}, ${settings.workers} bcrypt worker(s); ` +
      `${settings.connections} proxied connections for ${settings.seconds} s, then the same ` +
      `beside ${STORM_CONNECTIONS} login connections (after a ${settings.warmupSeconds} s warm-up)`,
    line(header),
    ...rows.map(line),
  ].join('\n');
}

function progress(message: string): void {
  process.stderr.write(`» ${message}\n`);
}

runMain('bench:memory', main, teardown);
