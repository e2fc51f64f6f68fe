/**
 * What the throw-away servers of the tests (nginx, Caddy, redis-server)
 * share: watching their output, knowing they serve, and stopping them
 * without leaving a process or a directory behind.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { acceptsConnections } from './ports.js';

const atExit = new Set<() => void>();
// One listener on the process for every server it owns, not one each: a test
// file may run more than ten at once (a Sentinel set and a Cluster beside its
// own Redis), past the emitter's warning limit for what is no leak.
process.on('exit', () => {
  for (const cleanup of atExit) {
    try {
      cleanup();
    } catch {
      // The others still run.
    }
  }
});

/**
 * Runs `cleanup` if the test process exits while it is registered: for a
 * server the test owns, so that a process dying without its `stop()` leaves
 * nothing behind. @returns the unregistering function, for `stop()`.
 */
export function cleanUpAtExit(cleanup: () => void): () => void {
  atExit.add(cleanup);
  return () => void atExit.delete(cleanup);
}

/** The tail of a child's output; the listeners stay for its life and keep the pipes drained. */
export function watchOutput(child: ChildProcess): () => string {
  let output = '';
  const collect = (chunk: Buffer | string): void => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.once('error', (err) => collect(String(err)));
  return () => output;
}

/**
 * Resolves true once `pidFile` names the child and `port` accepts connections
 * (the server writes its pid file after binding, so the port is its own, not
 * another process's); false if it dies or `timeoutMs` passes first.
 */
export async function untilServing(
  child: ChildProcess,
  pidFile: string,
  port: number,
  timeoutMs: number,
): Promise<boolean> {
  let failed = false;
  child.once('error', () => (failed = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (failed || child.exitCode !== null || child.signalCode !== null) return false;
    if (pidFileNames(pidFile, child.pid) && (await acceptsConnections(port))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/**
 * A `stop()` for a serving child that owns `dir`; a test process that dies
 * without calling it still kills the child and removes the directory.
 */
export function ownedServer(
  child: ChildProcess,
  dir: string,
  graceMs: number,
): () => Promise<void> {
  const forget = cleanUpAtExit(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return async () => {
    await stopChild(child, graceMs);
    forget();
    rmSync(dir, { recursive: true, force: true });
  };
}

function pidFileNames(pidFile: string, pid: number | undefined): boolean {
  try {
    return pid !== undefined && Number(readFileSync(pidFile, 'utf8').trim()) === pid;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL if the child has not exited within `graceMs`; resolves on its exit. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
