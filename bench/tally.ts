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
    const [run] = await Tally.together([this], async () => [await drive()]);
    return run as Run;
  }

  /**
   * Runs `drive`, which loads every tally's target at the same time, and
   * records run i on tally i. Each server's CPU is its own process's, so it
   * stays per target; the others' CPU is the same for all of them.
   */
  static async together<R extends Run>(
    tallies: readonly Tally[],
    drive: () => Promise<R[]>,
  ): Promise<R[]> {
    const starts = tallies.map((tally) => {
      const pid = tally.#serverPid();
      return { pid, cpuBefore: pid === undefined ? 0 : processCpuSeconds(pid) };
    });
    const first = tallies[0];
    const watch = watchOtherCpu(first === undefined ? () => [] : first.#benchPids);
    const runs = await drive();
    const othersPercent = watch.stop();
    tallies.forEach((tally, i) => {
      const run = runs[i];
      const { pid, cpuBefore } = starts[i] as (typeof starts)[number];
      if (run === undefined) throw new Error(`${tally.name}: the load made no run for it`);
      tally.#entries.push({
        run,
        othersPercentSeconds: othersPercent * run.seconds,
        serverCpuSeconds: pid === undefined ? 0 : processCpuSeconds(pid) - cpuBefore,
      });
    });
    return runs;
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
