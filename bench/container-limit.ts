/**
 * A process started as if it ran in a container with a memory limit, as far
 * as Node can tell. Node sizes V8's heap from the memory it may use (libuv's
 * `uv_get_constrained_memory`: the limit of its cgroup, else the machine's
 * RAM), so a gateway measured on a 24 GB machine grows its young generation
 * as it never would under `limits.memory: 256Mi`. Here the limit file of the
 * process's own cgroup is covered, in a mount namespace of its own
 * (`unshare -m`, root only), by a file holding `limitMb`: Node reads it, the
 * kernel enforces nothing (no OOM kill: compare the peak RSS with the limit).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The limit file libuv reads for this process: cgroup v2's memory.max, else v1's memory.limit_in_bytes. */
function cgroupLimitFile(): string {
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    const path = lines.find((l) => l.startsWith('0::'))?.slice(3);
    if (path !== undefined) return join('/sys/fs/cgroup', path, 'memory.max');
  }
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('memory'));
  if (v1 === undefined) throw new Error('no memory cgroup in /proc/self/cgroup');
  return join('/sys/fs/cgroup/memory', v1.slice(2).join(':'), 'memory.limit_in_bytes');
}

/** `[command, args]` that run `command args` seeing a memory limit of `limitMb`. */
export function underMemoryLimit(
  limitMb: number,
  command: string,
  args: string[],
): [string, string[]] {
  if (process.getuid?.() !== 0)
    throw new Error('a memory limit as Node sees it needs root (unshare -m)');
  const target = cgroupLimitFile();
  if (!existsSync(target)) throw new Error(`${target}: no such file`);
  const file = join(mkdtempSync(join(tmpdir(), 'tg-memory-limit-')), 'limit');
  writeFileSync(file, `${limitMb * 2 ** 20}\n`);
  // exec: the pid the caller measures is the gateway's.
  const script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
  return ['unshare', ['-m', 'sh', '-c', script, 'sh', file, target, command, ...args]];
}
