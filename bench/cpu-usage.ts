/**
 * CPU time from `/proc`: what one process spent (all its threads), and how
 * much processes outside the benchmark used during a run — the machine's busy
 * time minus the benchmark's own processes. On a shared 2-core machine a test
 * suite running beside the benchmark skews every figure; this says when it did.
 */
import { readFileSync } from 'node:fs';
import { MACHINE_CORES } from './processes.js';

interface Snapshot {
  machineBusy: number;
  ours: number;
  at: number;
}

/** Clock ticks per second of `/proc` times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * Starts watching; `stop()` returns the CPU the other processes used, in
 * percent of all cores, since the start. `pids` are the benchmark's processes
 * other than this one (read again at stop: a restarted gateway has a new pid).
 */
export function watchOtherCpu(pids: () => number[]): { stop(): number } {
  const start = snapshot(pids());
  return {
    stop() {
      const end = snapshot(pids());
      const elapsedTicks = ((end.at - start.at) / 1000) * TICKS_PER_SECOND;
      const others = end.machineBusy - start.machineBusy - (end.ours - start.ours);
      return Math.max(0, (others / (elapsedTicks * MACHINE_CORES)) * 100);
    },
  };
}

function snapshot(pids: number[]): Snapshot {
  const self = process.cpuUsage();
  let ours = ((self.user + self.system) / 1e6) * TICKS_PER_SECOND;
  for (const pid of pids) ours += processTicks(pid);
  return { machineBusy: machineBusyTicks(), ours, at: performance.now() };
}

/** user + nice + system + irq + softirq + steal of the `cpu` line. */
function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce<number>((a, b) => a + (b ?? 0), 0);
}

/**
 * CPU seconds a process and its children have used so far, user and system,
 * all threads (0 once it is gone). Children count for servers that fork
 * their workers (nginx: a master and one worker); the Node ones have none.
 */
export function processCpuSeconds(pid: number): number {
  return processTicks(pid) / TICKS_PER_SECOND;
}

/** The pids of a process's children (none once it is gone). */
export function childPids(pid: number): number[] {
  try {
    const list = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return list === '' ? [] : list.split(' ').map(Number);
  } catch {
    return [];
  }
}

/** utime + stime of a process and its children (0 once it is gone). */
function processTicks(pid: number): number {
  return childPids(pid).reduce((sum, child) => sum + ownTicks(child), ownTicks(pid));
}

/** utime + stime of one process, all threads (0 once it is gone). */
function ownTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}
