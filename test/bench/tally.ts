/**
 * One target's measurement, run by run: the load figures, the CPU the serving
 * process spent on them, and the CPU processes outside the benchmark took
 * meanwhile (on a shared 2-core machine, the sign of a skewed run).
 */
import { processCpuSeconds, watchOtherCpu } from './cpu-usage.js';
import { summarize, type LoadResult, type Run } from './load.js';

interface Entry {
  run: Run;
  serverCpuSeconds: number;
  othersPercentSeconds: number;
}

/** Runs of one target, added one by one, summed into one {@link LoadResult}. */
export class Tally {
  readonly name: string;
  readonly #serverPid: () => number | undefined;
  readonly #benchPids: () => number[];
  readonly #entries: Entry[] = [];

  /**
   * @param serverPid the process answering the load now (read at every run:
   *   the process may be restarted between runs), whose CPU per request is
   *   reported; undefined when it serves other load at the same time.
   * @param benchPids every process the benchmark started (for others' CPU).
   */
  constructor(name: string, serverPid: () => number | undefined, benchPids: () => number[]) {
    this.name = name;
    this.#serverPid = serverPid;
    this.#benchPids = benchPids;
  }

  /** How many runs there are so far: pass it to {@link result} to sum only later ones. */
  get length(): number {
    return this.#entries.length;
  }

  /** Runs `drive` and records its run. */
  async add(drive: () => Promise<Run>): Promise<Run> {
    const pid = this.#serverPid();
    const watch = watchOtherCpu(this.#benchPids);
    const cpuBefore = pid === undefined ? 0 : processCpuSeconds(pid);
    const run = await drive();
    this.#entries.push({
      run,
      othersPercentSeconds: watch.stop() * run.seconds,
      serverCpuSeconds: pid === undefined ? 0 : processCpuSeconds(pid) - cpuBefore,
    });
    return run;
  }

  /** The runs so far (from the `from`-th on), as one measurement. */
  result(from = 0): LoadResult {
    const entries = this.#entries.slice(from);
    const result = summarize(
      this.name,
      entries.map((e) => e.run),
    );
    const sum = (pick: (e: Entry) => number) => entries.reduce((a, e) => a + pick(e), 0);
    if (result.seconds > 0)
      result.othersCpuPercent = sum((e) => e.othersPercentSeconds) / result.seconds;
    if (this.#serverPid() !== undefined) {
      result.serverCpuUsPerRequest =
        (sum((e) => e.serverCpuSeconds) * 1e6) / Math.max(1, result.completed);
    }
    return result;
  }
}
