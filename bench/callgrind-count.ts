/**
 * Counting a proxy's instructions per request under valgrind's callgrind,
 * whatever drives it (`instructions.ts`: HTTP/1.1 with autocannon;
 * `grpc.ts`: gRPC calls over one HTTP/2 connection). The proxy starts under
 * callgrind with instrumentation off, is warmed up, then counted over a
 * fixed number of requests; the count is given in all and without V8's GC,
 * write barrier and allocation (`callgrind-dump.ts`).
 *
 * Main thread only (callgrind --separate-threads): node runs with
 * `--v8-pool-size=0 --single-threaded-gc` so that garbage collection is
 * counted where it happens, on the main thread; what the optimizing compiler
 * still does on its own thread after the warm-up is left out. The driver
 * runs in the benchmark's own process, never in the counted one.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { ComparedProxy } from './backends.js';
import { gcShare } from './callgrind-dump.js';
import { PROJECT_ROOT, spawnProcess, waitForPort, type BenchProcess } from './processes.js';

/** Everything runs ~50× slower under valgrind: minutes to start, not seconds. */
const START_TIMEOUT_MS = 300_000;
const NODE_FLAGS = ['--v8-pool-size=0', '--single-threaded-gc'];

/** A count per request: in all, and without V8's GC (what repeats within ~1 %). */
export interface Counted {
  all: number;
  withoutGc: number;
}

export interface CountOptions {
  /** Where the dumps go: `<dir>/<name>.<pid>.1-01` (main thread, first dump). */
  dumps: string;
  /** Keep V8's `--perf-basic-prof` map beside the dump, for `callgrind-breakdown.ts`. */
  keep: boolean;
  /** Requests in the counted window. */
  count: number;
  /** Drives the warm-up, instrumentation off. */
  warmUp(): Promise<void>;
  /** Drives exactly `count` requests, counted. */
  counted(proc: BenchProcess): Promise<void>;
  /** A progress line (stderr). */
  progress(message: string): void;
  /** Registers the process's stop with the benchmark's teardown. */
  onStarted(proc: BenchProcess): void;
}

/** Starts `subject` under callgrind, warms it up, counts; per request, in all and without GC. */
export async function countUnderCallgrind(
  subject: ComparedProxy,
  options: CountOptions,
): Promise<Counted> {
  const out = join(options.dumps, subject.name.replace(/\W+/g, '-'));
  options.progress(`${subject.name}: starting under callgrind`);
  const proc = spawnProcess(
    subject.name,
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--callgrind-out-file=${out}.%p`,
      process.execPath,
      ...NODE_FLAGS,
      ...(options.keep ? ['--perf-basic-prof'] : []),
      ...subject.nodeArgs,
    ],
    PROJECT_ROOT,
  );
  options.onStarted(proc);
  await waitForPort(proc, subject.port, START_TIMEOUT_MS);
  await options.warmUp();
  callgrindControl(proc, '--instr=on');
  await options.counted(proc);
  callgrindControl(proc, '--dump');
  callgrindControl(proc, '--instr=off');
  await proc.stop();
  if (options.keep) keepPerfMap(out, proc.pid);
  const { total, gc } = gcShare(`${out}.${proc.pid}.1-01`);
  if (total !== mainThreadInstructions(out, proc.pid)) throw new Error('the dump does not add up');
  return { all: total / options.count, withoutGc: (total - gc) / options.count };
}

/**
 * The gateway with its revocation lease at the longest (60 s): under
 * callgrind a renewal (four per lease, 2 s by default) can come too late and
 * the gateway then refuses, failing closed, and every renewal is background
 * work counted as the requests'. Nothing per request changes.
 */
export function withLongLease(proxy: ComparedProxy): ComparedProxy {
  const at = proxy.nodeArgs.indexOf('--config');
  if (at < 0) return proxy;
  const file = proxy.nodeArgs[at + 1] as string;
  const config = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const longLease = file.replace(/\.yaml$/, '-long-lease.yaml');
  writeFileSync(longLease, stringify({ ...config, revocation: { leaseMs: 60_000 } }));
  const nodeArgs = [...proxy.nodeArgs];
  nodeArgs[at + 1] = longLease;
  return { ...proxy, nodeArgs };
}

export function requireCallgrind(): void {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  }
}

/** Next to the kept dumps: V8's map of JIT code addresses to names (`/tmp/perf-<pid>.map`). */
function keepPerfMap(out: string, pid: number): void {
  const map = `/tmp/perf-${pid}.map`;
  if (!existsSync(map)) return;
  copyFileSync(map, `${out}.${pid}.perf.map`);
  rmSync(map, { force: true });
}

function callgrindControl(proc: BenchProcess, command: string): void {
  execFileSync('callgrind_control', [command, String(proc.pid)], { stdio: 'ignore' });
}

/** The `summary:` (instructions) of the main thread's dump, which callgrind names `<out>.<pid>.1-01` (dump 1, thread 1). */
function mainThreadInstructions(out: string, pid: number): number {
  const file = `${out}.${pid}.1-01`;
  const match = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
  if (match === null) throw new Error(`no summary line in ${file}`);
  return Number(match[1]);
}
