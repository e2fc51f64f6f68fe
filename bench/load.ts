/**
 * Load generation with autocannon's programmatic API: one target at a time
 * (two cores: every process competes for CPU), and latencies kept in
 * microseconds — autocannon's own histogram rounds to whole milliseconds, too
 * coarse for "p99 added ≤ 1 ms". A target's measurement may be made of
 * several runs (interleaved with other targets'), summed by {@link summarize}.
 */
import autocannon from 'autocannon';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/** What to load and how hard. */
export interface LoadTarget {
  name: string;
  url: string;
  connections: number;
  headers?: Record<string, string>;
  /** GET when not given. */
  method?: 'GET' | 'POST';
  /** Sent with every request (a form, for the token endpoint). */
  body?: string;
  /** Seconds before a request with no answer counts as an error (autocannon's default: 10). */
  timeoutSeconds?: number;
}

/** How long: a duration in seconds, or a fixed number of requests. */
export type LoadLength = { seconds: number } | { amount: number };

/** The raw figures of one run. */
export interface Run {
  /** Requests answered (any status). */
  completed: number;
  seconds: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** Answers with a status outside 2xx. */
  non2xx: number;
  /** Connection errors and timeouts (requests with no answer). */
  errors: number;
  /** Every answer's latency, in µs. */
  latencies: RecordableHistogram;
}

/** A target's measurement: one run, or the sum of several. */
export interface LoadResult {
  name: string;
  completed: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  /** CPU used by processes outside the benchmark during the runs, % of all cores (set by the caller). */
  othersCpuPercent?: number | undefined;
  /** CPU time the serving process spent per answered request, in µs (set by the caller). */
  serverCpuUsPerRequest?: number | undefined;
}

/** Drives `target` once. */
export function drive(target: LoadTarget, length: LoadLength): Promise<Run> {
  // 1 µs .. 60 s, three significant figures.
  const latencies = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: target.connections,
        pipelining: 1,
        headers: target.headers ?? {},
        ...(target.method === undefined ? {} : { method: target.method }),
        ...(target.body === undefined ? {} : { body: target.body }),
        ...(target.timeoutSeconds === undefined ? {} : { timeout: target.timeoutSeconds }),
        title: target.name,
        ...('amount' in length ? { amount: length.amount } : { duration: length.seconds }),
      },
      (err, result) => {
        if (err !== null) {
          reject(err);
          return;
        }
        resolve({
          completed: result.requests.total,
          seconds: result.duration,
          statuses: Object.fromEntries(
            Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]),
          ),
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          latencies,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      latencies.record(Math.max(1, Math.round(responseTime * 1000)));
    });
  });
}

/** The figures of `runs` taken together, as one measurement named `name`. */
export function summarize(name: string, runs: Run[]): LoadResult {
  const latencies = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  const statuses: Record<string, number> = {};
  let completed = 0;
  let seconds = 0;
  let non2xx = 0;
  let errors = 0;
  for (const run of runs) {
    latencies.add(run.latencies);
    for (const [code, count] of Object.entries(run.statuses)) {
      statuses[code] = (statuses[code] ?? 0) + count;
    }
    completed += run.completed;
    seconds += run.seconds;
    non2xx += run.non2xx;
    errors += run.errors;
  }
  const percentile = (p: number) =>
    latencies.count > 0 ? latencies.percentile(p) / 1000 : Number.NaN;
  return {
    name,
    completed,
    seconds,
    requestsPerSecond: seconds > 0 ? completed / seconds : 0,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    statuses,
    non2xx,
    errors,
  };
}
