/**
 * The benchmark's results: the shape written as JSON and printed as tables,
 * and the derived figures checked against the targets of issue 4.
 */
import type { LoginCeiling } from './login-ceiling.js';
import type { LoadResult } from './load.js';

/** Scenario 1: the same request straight to the upstream, through a bare proxy, through the gateway. */
export interface ThroughputScenario {
  direct: LoadResult;
  bare: LoadResult;
  /** The bare proxy behind one Koa middleware (the design not taken, measured). */
  koa: LoadResult;
  /**
   * The bare proxy doing exactly the gateway's header work (identity headers,
   * X-Request-Id, X-Forwarded-*) and nothing else: between it and the bare
   * proxy, what DESIGN §2 step 3 costs; between it and the gateway, what
   * authentication, tenant checks, metrics and timeouts cost.
   */
  headers: LoadResult;
  gateway: LoadResult;
  /** The bare proxy and the gateway, per set of processes (the totals above sum them). */
  processes: { bare: LoadResult; gateway: LoadResult }[];
  redis: {
    /** Patterns left out of the count. */
    excludedPatterns: string[];
    /** Counted calls during the measured gateway run, by command. */
    counted: Record<string, number>;
    /** Excluded calls seen during the same run, by command. */
    excluded: Record<string, number>;
    perRequest: number;
  };
  rssMb: { before: number; after: number };
  /** The bare proxy's RSS around its run: what plain Node proxying grows by, for comparison. */
  bareRssMb: { before: number; after: number };
}

/** Scenario 2: proxied load while a login storm hammers `GET /1/token`. */
export interface StormScenario {
  /** The gateway run of scenario 1: same gateway, same load, no storm. */
  without: LoadResult;
  with: LoadResult;
  /** The token endpoint during the storm. */
  token: LoadResult;
  /** The token endpoint under the same login load, with no proxied load beside it. */
  tokenAlone: LoadResult;
  ceiling: LoginCeiling;
}

/** Scenario 3 (BENCH_SOAK=1): gateway RSS over a million proxied requests. */
export interface SoakScenario {
  first: LoadResult;
  rest: LoadResult;
  rssMb: {
    after50k: number;
    after1M: number;
    /** After every 50,000 requests, from the first 50,000 to 1,000,000. */
    every50k: number[];
  };
}

/** Scenario 1b: latency at a fixed rate far below saturation. */
export interface LatencyScenario {
  rate: number;
  /** Pooled over every second. */
  bare: LoadResult;
  gateway: LoadResult;
  /** Each second's p99, in order: second i of one ran interleaved with second i of the other. */
  secondP99Ms: { bare: number[]; gateway: number[] };
}

/** The gateway's p99 minus the bare proxy's, second by second. */
export function secondP99AddedMs(latency: LatencyScenario): number[] {
  const { bare, gateway } = latency.secondP99Ms;
  return gateway.map((p99, i) => p99 - (bare[i] ?? Number.NaN));
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Everything one `npm run bench` measured. */
export interface BenchResults {
  machine: {
    cores: number;
    cpus: number;
    node: string;
    platform: string;
    cpu: string;
  };
  settings: {
    connections: number;
    stormConnections: number;
    warmupSeconds: number;
    seconds: number;
    rounds: number;
    processes: number;
    /** Whether the load generator and each proxy had a CPU of their own (see run.ts). */
    pinned: boolean;
  };
  throughput: ThroughputScenario;
  latency: LatencyScenario;
  storm: StormScenario;
  soak?: SoakScenario;
  /** Warn-level (and worse) lines the gateway logged, with the benchmark's phase at the time. */
  gatewayLog: { phase: string; line: string }[];
}

/** Figures derived from the results, each with its target from issue 4. */
export interface Verdict {
  label: string;
  value: number;
  unit: string;
  target: string;
  met: boolean;
}

/** Ratios and differences the targets are stated in. */
export function verdicts(r: BenchResults): Verdict[] {
  const { direct, bare, headers, gateway } = r.throughput;
  const p99Added = median(secondP99AddedMs(r.latency));
  const v: Verdict[] = [
    ratio(
      'throughput gateway / bare proxy',
      gateway.requestsPerSecond / bare.requestsPerSecond,
      '≥ 0.90',
      (x) => x >= 0.9,
    ),
    ratio(
      'throughput bare proxy + headers / bare proxy',
      headers.requestsPerSecond / bare.requestsPerSecond,
      '—',
      () => true,
    ),
    ratio(
      'throughput gateway / bare proxy + headers',
      gateway.requestsPerSecond / headers.requestsPerSecond,
      '—',
      () => true,
    ),
    ratio(
      'throughput gateway / direct',
      gateway.requestsPerSecond / direct.requestsPerSecond,
      '—',
      () => true,
    ),
    ratio(
      'server CPU per request, bare proxy in Koa / bare proxy',
      (r.throughput.koa.serverCpuUsPerRequest ?? NaN) / (bare.serverCpuUsPerRequest ?? NaN),
      '—',
      () => true,
    ),
    ratio(
      'server CPU per request gateway / bare proxy',
      (gateway.serverCpuUsPerRequest ?? NaN) / (bare.serverCpuUsPerRequest ?? NaN),
      '—',
      () => true,
    ),
    {
      label: `p99 added at ${r.latency.rate} req/s (median over ${r.latency.secondP99Ms.gateway.length} interleaved seconds)`,
      value: p99Added,
      unit: 'ms',
      target: '≤ 1 ms',
      met: p99Added <= 1,
    },
    {
      label: `p99 added at ${r.latency.rate} req/s (pooled over all seconds)`,
      value: r.latency.gateway.p99Ms - r.latency.bare.p99Ms,
      unit: 'ms',
      target: '—',
      met: true,
    },
    {
      label: 'p99 added at saturation (gateway − bare)',
      value: gateway.p99Ms - bare.p99Ms,
      unit: 'ms',
      target: '—',
      met: true,
    },
    ratio(
      'Redis commands per proxied request',
      r.throughput.redis.perRequest,
      '< 0.01',
      (x) => x < 0.01,
    ),
    ratio(
      'proxied p99 with storm / without',
      r.storm.with.p99Ms / r.storm.without.p99Ms,
      '≤ 2',
      (x) => x <= 2,
    ),
    ratio(
      'token req/s during storm / login ceiling',
      r.storm.token.requestsPerSecond / r.storm.ceiling.loginsPerSecond,
      '≥ 0.8',
      (x) => x >= 0.8,
    ),
    ratio(
      'token req/s alone / login ceiling',
      r.storm.tokenAlone.requestsPerSecond / r.storm.ceiling.loginsPerSecond,
      '≥ 0.8',
      (x) => x >= 0.8,
    ),
  ];
  if (r.soak !== undefined) {
    const growth = r.soak.rssMb.after1M - r.soak.rssMb.after50k;
    v.push({
      label: 'RSS after 1M − after 50k',
      value: growth,
      unit: 'MB',
      target: '≤ 30 MB',
      met: growth <= 30,
    });
  }
  return v;
}

function ratio(label: string, value: number, target: string, ok: (x: number) => boolean): Verdict {
  return { label, value, unit: '', target, met: ok(value) };
}

/** Every measured run (warm-ups excluded). */
export function measuredRuns(r: BenchResults): LoadResult[] {
  const runs = [
    r.throughput.direct,
    r.throughput.bare,
    r.throughput.koa,
    r.throughput.headers,
    r.throughput.gateway,
    r.latency.bare,
    r.latency.gateway,
    r.storm.with,
    r.storm.token,
    r.storm.tokenAlone,
  ];
  if (r.soak !== undefined) runs.push(r.soak.first, r.soak.rest);
  return runs;
}

/** Runs with a non-2xx answer or an unanswered request: their figures are suspect. */
export function failedRuns(r: BenchResults): LoadResult[] {
  return measuredRuns(r).filter((run) => run.non2xx > 0 || run.errors > 0);
}
