/**
 * The gRPC benchmark (`npm run bench:grpc`, issue 47's Performance section):
 * unary calls of the tests' echo service (`test/support/echo.proto`, a
 * 26-byte message, 31 bytes framed) through a bare `node:http2` proxy
 * (`bare-http2-proxy.mjs`) and through the gateway (`protocol: grpc` route, bearer token, tenant
 * from metadata, identity injected: `grpc-proxies.ts`), each in front of the
 * same @grpc/grpc-js upstream in a process of its own (`grpc-upstream.mjs`).
 * The driver (`grpc-load.ts`: a raw `node:http2` client, the request frame
 * computed once) is this process: one HTTP/2 connection, `streams` calls in
 * flight on it.
 *
 * (a) Instructions per call, main thread, under callgrind
 *     (`callgrind-count.ts`, as `npm run bench:instructions`): warm-up with
 *     instrumentation off on two connections one after the other, then
 *     `count` calls counted on a third; in all and without V8's GC. Issue
 *     47's target: gateway ≤ 1.3 × the bare proxy. The steering figure: it
 *     moves little with the machine's load.
 * (b) Calls per second and latency at saturation: `runs` rounds, each
 *     starting a fresh process of each proxy in turn (the order alternating
 *     by round), warming it up, then driving it for `seconds`. Given per run
 *     and as ranges; on a shared machine they move far more than (a).
 *
 * Environment: BENCH_GRPC_PARTS (`instructions,throughput`, the default, or
 * one of them), BENCH_GRPC_STREAMS (calls in flight, default 16),
 * BENCH_GRPC_WARMUP (calls before counting, default 10000),
 * BENCH_GRPC_COUNT (calls counted, default 4000), BENCH_GRPC_TARGETS
 * (`bare http2 proxy`, `gateway` or both, the default), BENCH_GRPC_RUNS (default
 * 3), BENCH_GRPC_SECONDS (per run, default 10), BENCH_INSTRUCTIONS_KEEP (a
 * directory to keep the dumps and V8's perf maps in, for
 * `tsx bench/callgrind-breakdown.ts DIR COUNT 40 bare-http2-proxy gateway`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackends, type ComparedProxy } from './backends.js';
import {
  countUnderCallgrind,
  requireCallgrind,
  withLongLease,
  type Counted,
} from './callgrind-count.js';
import { processCpuSeconds } from './cpu-usage.js';
import { positiveInt } from './env.js';
import { driveGrpc, type GrpcLength, type GrpcRun, type GrpcTarget } from './grpc-load.js';
import { grpcProxies } from './grpc-proxies.js';
import {
  createTeardown,
  MACHINE_CORES,
  PROJECT_ROOT,
  runMain,
  spawnNode,
  waitForPort,
  type BenchProcess,
} from './processes.js';
import { formatCounts, formatRates, type RateRow } from './grpc-report.js';

const parts = (process.env.BENCH_GRPC_PARTS ?? 'instructions,throughput').split(',');
const settings = {
  streams: positiveInt('BENCH_GRPC_STREAMS', 16),
  warmup: positiveInt('BENCH_GRPC_WARMUP', 10_000),
  count: positiveInt('BENCH_GRPC_COUNT', 4_000),
  runs: positiveInt('BENCH_GRPC_RUNS', 3),
  seconds: positiveInt('BENCH_GRPC_SECONDS', 10),
  keep: process.env.BENCH_INSTRUCTIONS_KEEP,
  targets: process.env.BENCH_GRPC_TARGETS?.split(',').map((name) => name.trim()),
};
/** Seconds of calls before a throughput run's measured ones (JIT, pools). */
const RATE_WARMUP_SECONDS = 3;

const teardown = createTeardown();
const dumps = settings.keep ?? mkdtempSync(join(tmpdir(), 'tg-bench-grpc-callgrind-'));
if (settings.keep === undefined)
  teardown.add(() => rmSync(dumps, { recursive: true, force: true }));
else mkdirSync(dumps, { recursive: true });

async function main(): Promise<void> {
  if (parts.includes('instructions')) requireCallgrind();
  const backends = await startBackends(teardown, 'grpc-upstream.mjs');
  const proxies = (await grpcProxies(backends)).filter(
    (proxy) => settings.targets === undefined || settings.targets.includes(proxy.name),
  );
  const header = `one HTTP/2 connection, ${settings.streams} calls in flight; ${MACHINE_CORES} cores, Node ${process.version}`;
  if (parts.includes('instructions')) {
    const counts = new Map<string, Counted>();
    for (const proxy of proxies.map(withLongLease))
      counts.set(proxy.name, await countOne(proxy, backends.headers));
    const about = `${settings.warmup} calls warm-up, ${settings.count} counted, ${header}`;
    process.stdout.write(`\n${formatCounts(counts, about)}\n`);
  }
  if (parts.includes('throughput')) {
    const rows = await alternatingRuns(proxies, backends.headers);
    const about = `${settings.runs} alternating runs of ${settings.seconds} s, fresh processes each, ${header}`;
    process.stdout.write(`\n${formatRates(rows, about)}\n`);
  }
}

function grpcTarget(proxy: ComparedProxy, headers: Record<string, string>): GrpcTarget {
  return { name: proxy.name, port: proxy.port, headers, streams: settings.streams };
}

/** Instructions per call of `proxy` (part a). */
async function countOne(proxy: ComparedProxy, headers: Record<string, string>): Promise<Counted> {
  const target = grpcTarget(proxy, headers);
  let started: BenchProcess | undefined;
  return countUnderCallgrind(proxy, {
    dumps,
    keep: settings.keep !== undefined,
    count: settings.count,
    progress,
    onStarted(proc) {
      started = proc;
      teardown.add(() => proc.stop());
    },
    async warmUp() {
      progress(`${proxy.name}: ${settings.warmup} calls to warm up, on two connections`);
      // Two connections one after the other, as instructions.ts and for its
      // reason: a new connection's objects throw V8's optimized socket and
      // stream code away once in a process's life; let that be in the warm-up.
      const first = Math.ceil(settings.warmup / 2);
      await calls(target, { amount: first }, started);
      await calls(target, { amount: settings.warmup - first }, started);
    },
    async counted() {
      progress(`${proxy.name}: ${settings.count} calls counted`);
      await calls(target, { amount: settings.count }, started, true);
    },
  });
}

/**
 * Drives `target`; any call not answered in full makes the figures
 * meaningless. Counted (`counted`), a few refusals (under 1 %: the
 * store timing out under callgrind on a loaded machine, as
 * `instructions.ts` allows) are reported with the process's warnings and
 * the count kept.
 */
async function calls(
  target: GrpcTarget,
  length: GrpcLength,
  proc: BenchProcess | undefined,
  counted = false,
): Promise<GrpcRun> {
  const run = await driveGrpc(target, length);
  const asked = 'amount' in length ? length.amount : run.completed + run.failed;
  if (run.failed === 0 && run.completed === asked) return run;
  const warnings = proc
    ?.output()
    .split('\n')
    .filter((line) => /"level":[4-6]0/.test(line))
    .slice(-3)
    .join('\n');
  const summary = `${target.name}: ${run.completed} of ${asked} answered, ${run.failed} failed (first: ${run.firstFailure ?? '-'}); the last warnings:\n${warnings ?? '-'}`;
  if (!counted || run.completed + run.failed !== asked || run.failed > asked / 100)
    throw new Error(summary);
  progress(`${summary}\nkept.`);
  return run;
}

/** Part b: per round, a fresh process of each proxy, the order alternating. */
async function alternatingRuns(
  proxies: ComparedProxy[],
  headers: Record<string, string>,
): Promise<RateRow[]> {
  const rows: RateRow[] = [];
  for (let round = 0; round < settings.runs; round++) {
    const order = round % 2 === 0 ? proxies : [...proxies].reverse();
    for (const proxy of order) {
      const proc = spawnNode(proxy.name, proxy.nodeArgs, PROJECT_ROOT);
      teardown.add(() => proc.stop());
      try {
        await waitForPort(proc, proxy.port, 30_000);
        const target = grpcTarget(proxy, headers);
        await calls(target, { seconds: RATE_WARMUP_SECONDS }, proc);
        const cpuBefore = processCpuSeconds(proc.pid);
        const run = await calls(target, { seconds: settings.seconds }, proc);
        const cpu = processCpuSeconds(proc.pid) - cpuBefore;
        rows.push({ round: round + 1, name: proxy.name, run, cpu, load: loadavg()[0] ?? NaN });
        progress(`run ${round + 1}, ${proxy.name}: ${Math.round(run.completed / run.seconds)}/s`);
      } finally {
        await proc.stop();
      }
    }
  }
  return rows;
}

function progress(message: string): void {
  process.stderr.write(`[grpc] ${message}\n`);
}

runMain('bench:grpc', main, teardown);
