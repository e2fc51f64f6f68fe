/**
 * One target's measurement, run by run: the load figures, the CPU the serving
 * process spent on them, and the CPU processes outside the benchmark took
 * meanwhile (on a shared 2-core machine, the sign of a skewed run).
 */
import { processCpuSeconds, watchOtherCpu } from './cpu-usage.js';
import { summarize, type LoadResult, type Run } from './load.js';

/** Runs of one target, added one by one, summed into one {@link LoadResult}. */
export class Tally {
  readonly name: string;
  readonly #serverPid: number | undefined;
  readonly #benchPids: () => number[];
  readonly #runs: Run[] = [];
  #othersPercentSeconds = 0;
  #serverCpuSeconds = 0;

  /**
   * @param serverPid the process answering the load, whose CPU per request
   *   is reported; undefined when it serves other load at the same time.
   * @param benchPids every process the benchmark started (for others' CPU).
   */
  constructor(name: string, serverPid: number | undefined, benchPids: () => number[]) {
    this.name = name;
    this.#serverPid = serverPid;
    this.#benchPids = benchPids;
  }

  /** Runs `drive` and records its run. */
  async add(drive: () => Promise<Run>): Promise<Run> {
    const watch = watchOtherCpu(this.#benchPids);
    const cpuBefore = this.#serverPid === undefined ? 0 : processCpuSeconds(this.#serverPid);
    const run = await drive();
    this.#othersPercentSeconds += watch.stop() * run.seconds;
    if (this.#serverPid !== undefined) {
      this.#serverCpuSeconds += processCpuSeconds(this.#serverPid) - cpuBefore;
    }
    this.#runs.push(run);
    return run;
  }

  /** The runs so far, as one measurement. */
  result(): LoadResult {
    const result = summarize(this.name, this.#runs);
    if (result.seconds > 0) result.othersCpuPercent = this.#othersPercentSeconds / result.seconds;
    if (this.#serverPid !== undefined) {
      result.serverCpuUsPerRequest = (this.#serverCpuSeconds * 1e6) / Math.max(1, result.completed);
    }
    return result;
  }
}
