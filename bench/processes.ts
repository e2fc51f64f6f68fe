/**
 * The benchmark's child processes: spawned, waited for, measured, and always
 * stopped — at the end, on error, and on SIGINT/SIGTERM. Every child is
 * spawned directly (never through npm or a shell), so its pid is the pid of
 * the process being measured.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { acceptsConnections, findFreePort } from '../test/support/ports.js';

/** The project's root (children run there) and this directory (the helper scripts). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

/** A running child process. */
export interface BenchProcess {
  name: string;
  pid: number;
  /** The last few KB of its stdout and stderr. */
  output(): string;
  /** Whether it has exited (on its own or stopped). */
  exited(): boolean;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Longer than the gateway's default drain (`shutdown.drainSeconds: 10`): never cut a clean stop short. */
const STOP_GRACE_MS = 12_000;
const OUTPUT_TAIL = 16_000;

/** Every child not yet stopped, killed outright if the benchmark exits without stopping it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `node ARGS...` with stdin piped: the benchmark's own helper scripts
 * exit when that pipe closes, so even a killed benchmark leaves none behind.
 * `onLine` sees every line the child writes to stdout or stderr.
 */
export function spawnNode(
  name: string,
  args: string[],
  cwd: string,
  onLine: (line: string) => void = () => {},
): BenchProcess {
  return spawnProcess(name, process.execPath, args, cwd, onLine);
}

/** {@link spawnNode} for any program (a tool that runs node under it, say). */
export function spawnProcess(
  name: string,
  command: string,
  args: string[],
  cwd: string,
  onLine: (line: string) => void = () => {},
): BenchProcess {
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${name}: could not be started`);
  running.add(child);
  let tail = '';
  const collector = () => {
    let partial = '';
    return (chunk: Buffer): void => {
      const text = chunk.toString();
      tail = (tail + text).slice(-OUTPUT_TAIL);
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    };
  };
  // The listeners stay for the child's life: they keep its pipes drained.
  child.stdout.on('data', collector());
  child.stderr.on('data', collector());
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const hasExited = (): boolean => child.exitCode !== null || child.signalCode !== null;

  return {
    name,
    pid: child.pid,
    output: () => tail,
    exited: hasExited,
    async stop() {
      if (hasExited()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * Resolves once `port` accepts a TCP connection. Rejects when the process
 * exits first or the deadline passes, with the process's output attached.
 */
export async function waitForPort(proc: BenchProcess, port: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exited()) break;
    if (await acceptsConnections(port)) return;
    await sleep(50);
  }
  const why = proc.exited() ? 'exited before listening' : `did not listen within ${timeoutMs} ms`;
  throw new Error(`${proc.name} (port ${port}) ${why}:\n${proc.output()}`);
}

/**
 * Where the benchmark's threads run with BENCH_PIN=1, on two cores or more:
 * the load generator (this process's main thread) and the upstream on CPU 0,
 * the proxy being measured on CPU 1, so no proxy shares its core with the
 * load generator. Only main threads are pinned: a proxy's other threads
 * (garbage collection helpers, the gateway's bcrypt pool) run on any CPU.
 * Not the default: on two cores the login storm then has three busy threads
 * for two CPUs with one of them fixed, and the token endpoint gets less
 * than when the scheduler places everything.
 */
export const LOAD_CPU = 0;
export const PROXY_CPU = 1;

/**
 * The machine's cores, read when this module loads, before anything is
 * pinned: `os.availableParallelism()` follows the calling thread's CPUs, so
 * once the load generator is pinned it answers 1.
 */
export const MACHINE_CORES = availableParallelism();

/**
 * Pins the main thread of `pid` to `cpu` (taskset, util-linux), after giving
 * every thread of it all CPUs back: a child inherits the CPUs of the thread
 * that spawned it, and this process's main thread is pinned.
 */
export function pinMainThread(pid: number, cpu: number): void {
  const all = `0-${MACHINE_CORES - 1}`;
  execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', all, String(pid)], {
    stdio: 'ignore',
  });
  execFileSync('taskset', ['--pid', '--cpu-list', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** Resident set size of a process in MB, from `VmRSS` in `/proc/<pid>/status`. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/**
 * Peak resident set size of a process in MB, from `VmHWM` in
 * `/proc/<pid>/status`: the most the kernel has held for it since it
 * started, what a container's memory limit is held against. Sampling
 * `VmRSS` can miss a peak between two reads; this cannot.
 */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
  if (match === null) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/**
 * Runs the registered clean-ups once, in reverse order: on `run()`, or on
 * SIGINT/SIGTERM (then exits 130/143).
 */
export function createTeardown(): { add(fn: () => unknown): void; run(): Promise<void> } {
  const steps: (() => unknown)[] = [];
  let done: Promise<void> | undefined;
  const run = (): Promise<void> => {
    done ??= (async () => {
      for (const step of steps.reverse()) {
        try {
          await step();
        } catch (err) {
          process.stderr.write(`clean-up failed: ${String(err)}\n`);
        }
      }
    })();
    return done;
  };
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping the benchmark's processes\n`);
      void run().finally(() => process.exit(code));
    });
  }
  return { add: (fn) => void steps.push(fn), run };
}

/** Runs a benchmark's `main`, reports its failure as `<label> failed: …` (exit code 1), then tears down. */
export function runMain(
  label: string,
  main: () => Promise<void>,
  teardown: { run(): Promise<void> },
): void {
  main()
    .catch((err: unknown) => {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.stderr.write(`${label} failed: ${text}\n`);
      process.exitCode = 1;
    })
    .finally(() => teardown.run());
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { findFreePort };
