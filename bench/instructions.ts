/**
 * Instructions per proxied request, counted (`npm run bench:instructions`):
 * bare http-proxy-3 (the old core), bare undici (the current one) and the
 * gateway each run under valgrind's callgrind, are warmed up with
 * instrumentation off, then counted over a fixed number of requests (the
 * same request as `npm run bench`).
 *
 * A count moves little with what else the machine is doing (the bare
 * proxies within ~1.5 % between runs, the gateway within ~3 %: its JIT
 * tiering depends on timing, and its wall-clock timers tick far more often
 * per request under valgrind), where requests per second on this kind of
 * machine swing ±20 % between two starts of the same program: so this is
 * the figure to compare two builds by, and to see what the gateway adds to
 * its core (gateway − bare undici = authentication, tenant matching, the
 * header policy, tenant slots, route timeout, metrics, access log, request
 * scope).
 * Except for V8's full collections: whether one falls in the counted window
 * moves a count by up to ~100k per request (the gateway's ~26 MB heap), so
 * each count is also given without V8's GC, write barrier and allocation
 * (`callgrind-dump.ts`), which repeats within ~1 % (issue 35).
 * It counts instructions, not cycles: cache misses and the cost of the
 * kernel's side of a syscall are not in it, so it is not a throughput ratio.
 *
 * The counting itself (callgrind's options, the dump, GC told apart) is
 * `callgrind-count.ts`, shared with the gRPC benchmark (`grpc.ts`).
 * Main thread only (callgrind --separate-threads): node runs with
 * `--v8-pool-size=0 --single-threaded-gc` so that garbage collection is
 * counted where it happens, on the main thread; what the optimizing compiler
 * still does on its own thread after the warm-up is left out.
 *
 * Needs valgrind (`apt-get install valgrind`). Environment:
 * BENCH_INSTRUCTIONS_WARMUP (requests before counting, default 10000, in two
 * halves on two sets of connections: see `countOne`),
 * BENCH_INSTRUCTIONS_COUNT (requests counted, default 4000),
 * BENCH_INSTRUCTIONS_TARGETS (comma-separated names to count, default all:
 * `bare http-proxy-3,bare undici,gateway,gateway (session)`; the last is a
 * request admitted by a browser session's cookie, `session-scenario.ts`),
 * BENCH_INSTRUCTIONS_KEEP (a directory: the callgrind dumps are kept there,
 * with V8's `--perf-basic-prof` map of each process to name its JIT code, for
 * `bench/callgrind-breakdown.ts`; the map costs a little at compile time only).
 *
 * `-- --check` counts bare undici, the gateway and the gateway with a session
 * (reported beside the bearer's, issue 44: within +5 %), and fails when the
 * gateway's ratio to bare undici, both without GC, is more than 5 % over the committed
 * `bench/instructions-baseline.json`; `-- --write-baseline` records it
 * (`instructions-baseline.ts`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { comparedProxies, startBackends, type ComparedProxy } from './backends.js';
import {
  countUnderCallgrind,
  requireCallgrind,
  withLongLease,
  type Counted,
} from './callgrind-count.js';
import { REQUEST_PATH } from './gateway-config.js';
import { sessionProxy } from './session-scenario.js';
import { positiveInt } from './env.js';
import {
  BASELINE_FILE,
  checkAgainst,
  readBaseline,
  writeBaseline,
} from './instructions-baseline.js';
import { drive, type LoadTarget } from './load.js';
import { createTeardown, MACHINE_CORES, runMain, type BenchProcess } from './processes.js';

const settings = {
  warmup: positiveInt('BENCH_INSTRUCTIONS_WARMUP', 10_000),
  count: positiveInt('BENCH_INSTRUCTIONS_COUNT', 4_000),
  connections: 10,
  targets: process.env.BENCH_INSTRUCTIONS_TARGETS?.split(',').map((name) => name.trim()),
  keep: process.env.BENCH_INSTRUCTIONS_KEEP,
};
const teardown = createTeardown();
const dumps = settings.keep ?? mkdtempSync(join(tmpdir(), 'tg-bench-callgrind-'));
if (settings.keep === undefined)
  teardown.add(() => rmSync(dumps, { recursive: true, force: true }));
else mkdirSync(dumps, { recursive: true });

/** `--check`: against the committed baseline; `--write-baseline`: record one (bare undici and the gateway only). */
const mode = process.argv.includes('--check')
  ? 'check'
  : process.argv.includes('--write-baseline')
    ? 'write-baseline'
    : 'table';
const targets =
  mode === 'table' ? settings.targets : ['bare undici', 'gateway', 'gateway (session)'];

async function main(): Promise<void> {
  requireCallgrind();
  const baseline = mode === 'check' ? readBaseline() : undefined;
  const backends = await startBackends(teardown);
  const counts = new Map<string, number>();
  const withoutGc = new Map<string, number>();
  const chosen = [...(await comparedProxies(backends)), await sessionProxy(backends)].filter(
    (proxy) => targets === undefined || targets.includes(proxy.name),
  );
  for (const proxy of chosen.map(withLongLease)) {
    const counted = await countOne(proxy, backends.headers);
    counts.set(proxy.name, counted.all);
    withoutGc.set(proxy.name, counted.withoutGc);
  }
  process.stdout.write(`\n${formatTable(counts)}\n\n${formatWithoutGc(withoutGc)}\n`);
  process.stdout.write(`${formatSession(counts, withoutGc)}\n`);
  const pair = {
    gateway: withoutGc.get('gateway') ?? NaN,
    bareUndici: withoutGc.get('bare undici') ?? NaN,
  };
  if (mode === 'write-baseline') {
    const written = writeBaseline(pair, settings);
    process.stdout.write(`baseline written to ${BASELINE_FILE}: ratio ${written.ratio}\n`);
  } else if (baseline !== undefined) {
    const verdict = checkAgainst(baseline, pair);
    process.stdout.write(`${verdict.ok ? 'ok' : 'FAILED'}: ${verdict.message}\n`);
    if (!verdict.ok) process.exitCode = 1;
  }
}

/**
 * Starts `subject` under callgrind, warms it up, counts `settings.count`
 * requests; per request, in all and without V8's GC (`callgrind-count.ts`).
 */
async function countOne(subject: ComparedProxy, headers: Record<string, string>): Promise<Counted> {
  const target: LoadTarget = {
    name: subject.name,
    url: `http://127.0.0.1:${subject.port}${subject.path ?? REQUEST_PATH}`,
    connections: settings.connections,
    headers: subject.headers ?? headers,
    // A loaded machine under callgrind: an answer may take far longer than autocannon's 10 s.
    timeoutSeconds: 300,
  };
  return countUnderCallgrind(subject, {
    dumps,
    keep: settings.keep !== undefined,
    count: settings.count,
    progress,
    onStarted: (proc) => teardown.add(() => proc.stop()),
    async warmUp() {
      progress(
        `${subject.name}: ${settings.warmup} requests to warm up, on two sets of connections`,
      );
      // Two sets of connections: when the first closes and the next opens, V8
      // throws away the optimized code of Node's socket, stream and http
      // functions once ("wrong map" on the new sockets; bare undici as the
      // gateway, `--trace-deopt`) and runs them in its baseline tier until it has
      // optimized them again. That happens once in a process's life: in the
      // warm-up, not in the counted window (issue 35: it was ~5k a request of
      // the gateway's count, more or less by run).
      const first = Math.ceil(settings.warmup / 2);
      await load(target, first);
      await load(target, settings.warmup - first);
    },
    async counted(proc) {
      progress(`${subject.name}: ${settings.count} requests counted`);
      await load(target, settings.count, proc);
    },
  });
}

/**
 * Drives `amount` requests; any answer other than 2xx makes the count
 * meaningless. Counted (`counted` given): a few refusals (under 1 %, the
 * store timing out under callgrind on a loaded machine) are reported with the
 * process's warnings, and the count kept.
 */
async function load(target: LoadTarget, amount: number, counted?: BenchProcess): Promise<void> {
  const run = await drive(target, { amount });
  const summary = `${target.name}: ${run.completed} of ${amount} answered, ${run.non2xx} non-2xx (${JSON.stringify(run.statuses)}), ${run.errors} errors`;
  const fine = run.non2xx === 0 && run.errors === 0 && run.completed === amount;
  if (fine) return;
  if (counted === undefined || run.errors > 0 || run.non2xx > amount / 100)
    throw new Error(summary);
  const warnings = counted
    .output()
    .split('\n')
    .filter((line) => /"level":[4-6]0/.test(line))
    .slice(-3);
  progress(`${summary}; kept. The last warnings:\n${warnings.join('\n')}`);
}

/** The figure to compare two builds by: a full GC in the window or not moves the totals by ±50k. */
function formatWithoutGc(counts: Map<string, number>): string {
  const undici = counts.get('bare undici') ?? Number.NaN;
  return [
    'Without V8 GC, write barrier and allocation (repeats within ~1 %; what --check compares):',
    ...[...counts].map(
      ([name, perRequest]) =>
        `${name.padEnd(22)} ${Math.round(perRequest).toLocaleString('en').padStart(9)}   ${(perRequest / undici).toFixed(3).padStart(13)}`,
    ),
  ].join('\n');
}

/** Issue 44: a request admitted by a session against one admitted by a bearer token (target ≤ +5 %). */
function formatSession(counts: Map<string, number>, withoutGc: Map<string, number>): string {
  const bearer = withoutGc.get('gateway');
  const session = withoutGc.get('gateway (session)');
  if (bearer === undefined || session === undefined) return '';
  const all = (counts.get('gateway (session)') ?? NaN) / (counts.get('gateway') ?? NaN);
  const delta = (session / bearer - 1) * 100;
  return `session ÷ bearer: ${(session / bearer).toFixed(3)} without GC (${delta >= 0 ? '+' : ''}${delta.toFixed(1)} %; target ≤ +5 %), ${all.toFixed(3)} in all`;
}

function formatTable(counts: Map<string, number>): string {
  const undici = counts.get('bare undici') ?? Number.NaN;
  const httpProxy = counts.get('bare http-proxy-3') ?? Number.NaN;
  const rows = [...counts].map(([name, perRequest]) => {
    const count = Math.round(perRequest).toLocaleString('en').padStart(9);
    return `${name.padEnd(22)} ${count}   ${(perRequest / undici).toFixed(3).padStart(13)}   ${(perRequest / httpProxy).toFixed(3).padStart(19)}`;
  });
  const gatewayCost = (counts.get('gateway') ?? Number.NaN) - undici;
  return [
    `Instructions per proxied request, main thread (callgrind; ${settings.warmup} requests warm-up, ${settings.count} counted, ${settings.connections} connections; ${MACHINE_CORES} cores, Node ${process.version})`,
    `${'target'.padEnd(22)} ${'instr/req'.padStart(9)}   ÷ bare undici   ÷ bare http-proxy-3`,
    ...rows,
    `the gateway's own work on the same core (auth, tenant match, header policy, slots, metrics, access log): +${Math.round(gatewayCost).toLocaleString('en')}`,
  ].join('\n');
}

function progress(message: string): void {
  process.stderr.write(`[instructions] ${message}\n`);
}

runMain('bench:instructions', main, teardown);
