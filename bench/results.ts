/**
 * The benchmark's results: the shape written as JSON and printed as tables,
 * and the derived figures checked against the targets of issues 4, 13, 23 and 32.
 */
import type { LoginCeiling } from './login-ceiling.js';
import type { LoadResult } from './load.js';
import { median, spread, type Spread } from './spread.js';
import { TARGETS, type TargetKey } from './targets.js';
import {
  cpuOverUser,
  PRINCIPAL_ROWS,
  redisPerRequest,
  type MachineClientScenario,
} from './machine-clients.js';

/** One measurement per target that ran. */
export type TargetRuns = Partial<Record<TargetKey, LoadResult>>;

/** Scenario 1: the same request straight to the upstream and through every proxy. */
export interface ThroughputScenario {
  /** Each target over all sets of processes (the figures summed). */
  totals: TargetRuns;
  /** Each target per set of processes: the report's medians and ratios are over these. */
  processes: TargetRuns[];
  /** Targets not run, with the reason (a peer's binary missing). */
  skipped: string[];
  /** The versions of the peers that ran. */
  peers: string[];
  redis: {
    /** Patterns left out of the count. */
    excludedPatterns: string[];
    /** Counted calls during the measured gateway run, by command. */
    counted: Record<string, number>;
    /** Excluded calls seen during the same run, by command. */
    excluded: Record<string, number>;
    perRequest: number;
  };
  /**
   * The gateway's RSS before and after its runs, and its peak (`VmHWM`: the
   * most the kernel held for it since it started, what a container's memory
   * limit is held against) at the end of the scenario.
   */
  rssMb: { before: number; after: number; peak: number };
  /** The bare proxy's RSS around its run: what plain Node proxying grows by, for comparison. */
  bareRssMb: { before: number; after: number };
}

/** `pick` of target `key` in every set where it ran. */
export function perSet(
  t: ThroughputScenario,
  key: TargetKey,
  pick: (run: LoadResult) => number | undefined,
): Spread {
  return spread(
    t.processes.map((set) => {
      const run = set[key];
      return run === undefined ? Number.NaN : (pick(run) ?? Number.NaN);
    }),
  );
}

/** `a`'s req/s over `b`'s, set by set (both measured on the same set, in the same rounds). */
export function throughputRatio(t: ThroughputScenario, a: TargetKey, b: TargetKey): Spread {
  return spread(
    t.processes.map((set) => {
      const x = set[a];
      const y = set[b];
      return x === undefined || y === undefined
        ? Number.NaN
        : x.requestsPerSecond / y.requestsPerSecond;
    }),
  );
}

/** `a`'s server CPU per request over `b`'s, set by set. */
export function cpuRatio(t: ThroughputScenario, a: TargetKey, b: TargetKey): Spread {
  return spread(
    t.processes.map(
      (set) =>
        (set[a]?.serverCpuUsPerRequest ?? Number.NaN) /
        (set[b]?.serverCpuUsPerRequest ?? Number.NaN),
    ),
  );
}

/** A target's summed measurement; throws for one that always runs but is missing. */
export function total(t: ThroughputScenario, key: TargetKey): LoadResult {
  const run = t.totals[key];
  if (run === undefined) throw new Error(`scenario 1: no ${key} run`);
  return run;
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
  /** The gateway's peak RSS (`VmHWM`) after the storm: the most it ever held, storm included. */
  peakRssMb: number;
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
    /** The most the soak's gateway ever held (`VmHWM`). */
    peak: number;
  };
}

/** Scenario 1b: latency at a fixed rate far below saturation. */
export interface LatencyScenario {
  rate: number;
  /** Pooled over every second. */
  bare: LoadResult;
  gateway: LoadResult;
  /** Bare undici, interleaved with the two, where it runs. */
  undici?: LoadResult;
  /** Each second's p99, in order: second i of one ran interleaved with second i of the others. */
  secondP99Ms: { bare: number[]; gateway: number[]; undici?: number[] };
}

/** The gateway's p99 minus the bare proxy's (or bare undici's), second by second. */
export function secondP99AddedMs(
  latency: LatencyScenario,
  against: 'bare' | 'undici' = 'bare',
): number[] {
  const { gateway } = latency.secondP99Ms;
  const base = latency.secondP99Ms[against] ?? [];
  return gateway.map((p99, i) => p99 - (base[i] ?? Number.NaN));
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
    /** The Node flags the gateway ran with: the image's (its Dockerfile's ENTRYPOINT). */
    gatewayNodeFlags: string[];
  };
  throughput: ThroughputScenario;
  latency: LatencyScenario;
  storm: StormScenario;
  /** Scenario 4 (issue 32): machine clients' credentials beside a user's. */
  machineClients: MachineClientScenario;
  soak?: SoakScenario;
  /** Warn-level (and worse) lines the gateway logged, with the benchmark's phase at the time. */
  gatewayLog: { phase: string; line: string }[];
}

/** Figures derived from the results, each with its target and the issue that set it. */
export interface Verdict {
  label: string;
  value: number;
  /** Per set of processes, for ratios of scenario 1. */
  range?: { min: number; max: number };
  unit: string;
  target: string;
  /** The issue the target comes from (undefined: reported, no target). */
  issue?: number;
  met: boolean;
}

/** Ratios and differences the issues' targets are stated in. */
export function verdicts(r: BenchResults): Verdict[] {
  const t = r.throughput;
  const gateway = total(t, 'gateway');
  const bare = total(t, 'bare');
  const p99Added = median(secondP99AddedMs(r.latency));
  const throughput = (
    a: TargetKey,
    b: TargetKey,
    label: string,
    target?: { min: number; issue: number },
  ): Verdict[] => {
    if (t.totals[a] === undefined || t.totals[b] === undefined) return [];
    const s = throughputRatio(t, a, b);
    return [
      {
        label: `throughput ${label} (median of ${t.processes.length} sets)`,
        value: s.median,
        range: { min: s.min, max: s.max },
        unit: '',
        target: target === undefined ? '—' : `≥ ${target.min.toFixed(1)}`,
        ...(target === undefined ? {} : { issue: target.issue }),
        met: target === undefined || s.median >= target.min,
      },
    ];
  };
  const cpu = (
    a: TargetKey,
    b: TargetKey,
    label: string,
    target?: { max: number; issue: number },
  ): Verdict[] => {
    if (t.totals[a] === undefined || t.totals[b] === undefined) return [];
    const s = cpuRatio(t, a, b);
    return [
      {
        label: `server CPU per request ${label}`,
        value: s.median,
        range: { min: s.min, max: s.max },
        unit: '',
        target: target === undefined ? '—' : `≤ ${target.max.toFixed(1)}`,
        ...(target === undefined ? {} : { issue: target.issue }),
        met: target === undefined || s.median <= target.max,
      },
    ];
  };
  const v: Verdict[] = [
    ...throughput('gateway', 'bare', 'gateway / bare http-proxy-3', { min: 2, issue: 13 }),
    ...throughput('gateway', 'haproxy', 'gateway / HAProxy jwt_verify', { min: 1.0, issue: 23 }),
    ...throughput('gateway', 'nginx', 'gateway / nginx', { min: 0.5, issue: 13 }),
    ...throughput('gateway', 'undici', 'gateway / bare undici'),
    ...throughput('undici', 'bare', 'bare undici / bare http-proxy-3'),
    ...throughput('headers', 'bare', 'bare http-proxy-3 + headers / bare http-proxy-3'),
    ...throughput('gateway', 'headers', 'gateway / bare http-proxy-3 + headers'),
    ...throughput('gateway', 'direct', 'gateway / direct'),
    ...cpu('koa', 'bare', 'bare http-proxy-3 in Koa / bare http-proxy-3'),
    ...cpu('gateway', 'bare', 'gateway / bare http-proxy-3'),
    ...cpu('gateway', 'undici', 'gateway / bare undici', { max: 1.3, issue: 23 }),
    {
      label: `p99 at ${r.latency.rate} req/s, gateway − bare http-proxy-3 (median over ${r.latency.secondP99Ms.gateway.length} interleaved seconds)`,
      value: p99Added,
      unit: 'ms',
      target: '≤ 0 ms (no worse)',
      issue: 13,
      met: p99Added <= 0,
    },
    {
      label: `p99 added at ${r.latency.rate} req/s (the same figure)`,
      value: p99Added,
      unit: 'ms',
      target: '≤ 1 ms',
      issue: 4,
      met: p99Added <= 1,
    },
    ...p99OverUndici(r.latency),
    {
      label: `p99 added at ${r.latency.rate} req/s (pooled over all seconds)`,
      value: r.latency.gateway.p99Ms - r.latency.bare.p99Ms,
      unit: 'ms',
      target: '—',
      met: true,
    },
    {
      label: 'p99 added at saturation (gateway − bare http-proxy-3, all sets)',
      value: gateway.p99Ms - bare.p99Ms,
      unit: 'ms',
      target: '—',
      met: true,
    },
    ratio('Redis commands per proxied request', t.redis.perRequest, '< 0.01', (x) => x < 0.01),
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
  v.push(...machineClientVerdicts(r));
  if (r.soak !== undefined) {
    const growth = r.soak.rssMb.after1M - r.soak.rssMb.after50k;
    v.push({
      label: 'RSS after 1M − after 50k',
      value: growth,
      unit: 'MB',
      target: '≤ 30 MB',
      issue: 4,
      met: growth <= 30,
    });
  }
  return v;
}

/**
 * Issue 32's targets: a client token's and an API key's server CPU per
 * request within +5 % of a user token's (set by set, on one process), each
 * under 0.01 Redis commands per request, and the client-credentials grant at
 * ≥ 20 × the Basic login's rate (GET /1/token alone, scenario 2).
 */
function machineClientVerdicts(r: BenchResults): Verdict[] {
  const m = r.machineClients;
  const ran = PRINCIPAL_ROWS.filter(({ key }) => m.processes.some((set) => set[key] !== undefined));
  const v: Verdict[] = ran
    .filter(({ key }) => key !== 'user')
    .map(({ key, name }) => {
      const s = cpuOverUser(m, key);
      return {
        label: `server CPU per request, ${name} / user token (median of ${m.processes.length} processes)`,
        value: s.median,
        range: { min: s.min, max: s.max },
        unit: '',
        target: '≤ 1.05',
        issue: 32,
        met: s.median <= 1.05,
      };
    });
  for (const { key, name } of ran) {
    const perRequest = redisPerRequest(m, key);
    v.push({
      label: `Redis commands per proxied request, ${name}`,
      value: perRequest,
      unit: '',
      target: '< 0.01',
      issue: 32,
      met: perRequest < 0.01,
    });
  }
  const grants = m.grant.load.requestsPerSecond / r.storm.tokenAlone.requestsPerSecond;
  v.push({
    label: 'client-credentials grants/s / Basic logins/s (each alone, same connections)',
    value: grants,
    unit: '',
    target: '≥ 20',
    issue: 32,
    met: grants >= 20,
  });
  return v;
}

/** Issue 35: the gateway's p99 at the paced rate within 1 ms of its own core's (bare undici). */
function p99OverUndici(latency: LatencyScenario): Verdict[] {
  if (latency.secondP99Ms.undici === undefined) return [];
  const added = median(secondP99AddedMs(latency, 'undici'));
  return [
    {
      label: `p99 at ${latency.rate} req/s, gateway − bare undici (median over ${latency.secondP99Ms.gateway.length} interleaved seconds)`,
      value: added,
      unit: 'ms',
      target: '≤ 1 ms',
      issue: 35,
      met: added <= 1,
    },
  ];
}

/** An issue 4 target on a plain ratio. */
function ratio(label: string, value: number, target: string, ok: (x: number) => boolean): Verdict {
  return { label, value, unit: '', target, issue: 4, met: ok(value) };
}

/** Every measured run (warm-ups excluded). */
export function measuredRuns(r: BenchResults): LoadResult[] {
  const runs = [
    ...TARGETS.flatMap(({ key }) => r.throughput.totals[key] ?? []),
    r.latency.bare,
    r.latency.gateway,
    ...(r.latency.undici === undefined ? [] : [r.latency.undici]),
    r.storm.with,
    r.storm.token,
    r.storm.tokenAlone,
    ...r.machineClients.processes.flatMap((set) => Object.values(set).map((run) => run.load)),
    r.machineClients.grant.load,
  ];
  if (r.soak !== undefined) runs.push(r.soak.first, r.soak.rest);
  return runs;
}

/** Runs with a non-2xx answer or an unanswered request: their figures are suspect. */
export function failedRuns(r: BenchResults): LoadResult[] {
  return measuredRuns(r).filter((run) => run.non2xx > 0 || run.errors > 0);
}

export { median, spread, TARGETS, type Spread, type TargetKey };
