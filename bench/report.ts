/**
 * The printed report: plain-text tables of a {@link BenchResults}.
 */
import type { LoadResult } from './load.js';
import { PRINCIPAL_ROWS, redisPerRequest, rowSpread } from './machine-clients.js';
import {
  failedRuns,
  measuredRuns,
  perSet,
  secondP99AddedMs,
  TARGETS,
  total,
  verdicts,
  type BenchResults,
  type Verdict,
} from './results.js';

/** Above this share of the cores used by others, a run's figures are marked as skewed. */
const NOISY_PERCENT = 10;

/** Scenario 1, one row per target: medians over the sets of processes, with the range. */
function throughputTable(t: BenchResults['throughput']): string[] {
  const rows = TARGETS.flatMap(({ key }) => {
    const all = t.totals[key];
    if (all === undefined) return [];
    const rate = perSet(t, key, (run) => run.requestsPerSecond);
    const cpu = perSet(t, key, (run) => run.serverCpuUsPerRequest);
    return [
      [
        all.name,
        `${rate.median.toFixed(0)} (${rate.min.toFixed(0)}–${rate.max.toFixed(0)})`,
        perSet(t, key, (run) => run.p50Ms).median.toFixed(2),
        perSet(t, key, (run) => run.p99Ms).median.toFixed(2),
        Number.isNaN(cpu.median)
          ? '—'
          : `${cpu.median.toFixed(0)} (${cpu.min.toFixed(0)}–${cpu.max.toFixed(0)})`,
        String(all.non2xx),
        String(all.errors),
        all.othersCpuPercent === undefined ? '—' : `${all.othersCpuPercent.toFixed(0)}%`,
      ],
    ];
  });
  return table(
    [
      'target',
      'req/s (min–max)',
      'p50 ms',
      'p99 ms',
      'server CPU µs/req (min–max)',
      'non-2xx',
      'errors',
      "others' CPU",
    ],
    rows,
  );
}

/** The whole report, ready to print. */
export function formatReport(r: BenchResults): string {
  const { machine, settings, throughput, storm, soak } = r;
  const out: string[] = [];
  out.push(
    `tenant-gateway benchmark — ${machine.cores} cores (os.availableParallelism; ${machine.cpus} CPUs listed), Node ${machine.node}, ${machine.platform}`,
    `cpu: ${machine.cpu}`,
    `gateway: dist/cli.js serve with the image's Node flags (its Dockerfile's ENTRYPOINT): ${settings.gatewayNodeFlags.join(' ') || 'none'}`,
    `load: autocannon, ${settings.connections} connections, pipelining 1, one target at a time; each run warmed up ${settings.warmupSeconds} s, then ${settings.seconds} s measured (scenario 1b: paced-load.ts, see there)`,
    settings.pinned
      ? 'placement: load generator and upstream on CPU 0, each proxy on CPU 1 (main threads; BENCH_PIN=1)'
      : 'placement: left to the scheduler (BENCH_PIN=1 gives the load generator and each proxy a CPU of their own)',
    '',
    `Scenario 1 — GET through each target at saturation (the same request with bearer token and X-Tenant-Id to each; upstream: 200, ~200-byte JSON, keep-alive); on ${settings.processes} fresh sets of proxy processes, each measured in ${settings.rounds} interleaved rounds of ${fixed(settings.seconds / settings.rounds)} s per target; figures are medians over the sets (min–max), non-2xx and errors summed`,
    ...throughputTable(throughput),
    ...(throughput.peers.length === 0 ? [] : [`  peers: ${throughput.peers.join('; ')}`]),
    ...throughput.skipped.map((why) => `  not run: ${why}`),
    '',
  );

  const redis = throughput.redis;
  const counted = Object.values(redis.counted).reduce((a, b) => a + b, 0);
  out.push(
    `Redis commands per proxied request: ${redis.perRequest.toFixed(4)} (${counted} counted commands / ${total(throughput, 'gateway').completed} requests, over the measured gateway runs)`,
    `  counted: ${describeCounts(redis.counted)}`,
    `  excluded (${redis.excludedPatterns.join(', ')}): ${describeCounts(redis.excluded)}`,
    `gateway RSS: ${mb(throughput.rssMb.before)} before scenario 1, ${mb(throughput.rssMb.after)} after (${signed(throughput.rssMb.after - throughput.rssMb.before)} MB); peak ${mb(throughput.rssMb.peak)} (VmHWM: the most it ever held, against a container's memory limit)`,
    `  for comparison, bare http-proxy-3 RSS: ${mb(throughput.bareRssMb.before)} before, ${mb(throughput.bareRssMb.after)} after (${signed(throughput.bareRssMb.after - throughput.bareRssMb.before)} MB)`,
    '',
    `Scenario 1b — latency at a fixed ${r.latency.rate} req/s per target (open loop, evenly paced, 10 kept-alive connections each, same request), both targets interleaved request by request for ${r.latency.secondP99Ms.gateway.length} s`,
    ...table(
      RUN_HEADER,
      [r.latency.bare, r.latency.gateway, ...(r.latency.undici ? [r.latency.undici] : [])].map(
        runRow,
      ),
    ),
    `  p99 per second, ms: bare ${listMs(r.latency.secondP99Ms.bare)}`,
    `                   gateway ${listMs(r.latency.secondP99Ms.gateway)}`,
    ...(r.latency.secondP99Ms.undici === undefined
      ? []
      : [`               bare undici ${listMs(r.latency.secondP99Ms.undici)}`]),
    `           gateway − bare ${listMs(secondP99AddedMs(r.latency))}`,
    '',
    `Scenario 2 — proxied load during a login storm (GET /1/token, Basic, ${settings.stormConnections} connections, bcrypt cost ${storm.ceiling.cost})`,
    ...table(RUN_HEADER, [
      runRow({ ...storm.without, name: 'proxied, no storm (scenario 1, same process)' }),
      runRow({ ...storm.with, name: 'proxied, during storm' }),
      runRow({ ...storm.token, name: 'GET /1/token, during storm' }),
      runRow({ ...storm.tokenAlone, name: 'GET /1/token, alone' }),
    ]),
    `gateway peak RSS (VmHWM) after the storm: ${mb(storm.peakRssMb)}`,
    `login ceiling: ${storm.ceiling.threads} pool threads ÷ ${storm.ceiling.compareMs.toFixed(1)} ms per bcryptjs compare (cost ${storm.ceiling.cost}, median of 5, plain node) = ${storm.ceiling.loginsPerSecond.toFixed(1)} logins/s`,
    '',
  );

  out.push(...machineClientSection(r), '');

  if (soak === undefined) {
    out.push('Scenario 3 — soak: skipped (set BENCH_SOAK=1 to run 1,000,000 proxied requests)', '');
  } else {
    out.push(
      'Scenario 3 — soak: gateway RSS over 1,000,000 proxied requests',
      ...table(RUN_HEADER, [
        runRow({ ...soak.first, name: 'first 50,000' }),
        runRow({ ...soak.rest, name: 'next 950,000' }),
      ]),
      `gateway RSS: ${mb(soak.rssMb.after50k)} after 50,000, ${mb(soak.rssMb.after1M)} after 1,000,000 (${signed(soak.rssMb.after1M - soak.rssMb.after50k)} MB); peak ${mb(soak.rssMb.peak)} (VmHWM)`,
      `  RSS after every 50,000 (MB): ${soak.rssMb.every50k.map((v) => v.toFixed(0)).join(' ')}`,
      '',
    );
  }

  out.push(
    'Against the targets of issues 4, 13, 23 and 32 (ratios of scenarios 1 and 4: median over the sets, min–max)',
    ...table(
      ['figure', 'value', 'target', 'issue', ''],
      verdicts(r).map((v) => [
        v.label,
        formatVerdictValue(v),
        v.target,
        v.issue === undefined ? '' : `#${v.issue}`,
        v.target === '—' ? '' : v.met ? 'met' : 'MISSED',
      ]),
    ),
    '',
  );

  const noisy = measuredRuns(r).filter((run) => (run.othersCpuPercent ?? 0) > NOISY_PERCENT);
  if (noisy.length > 0) {
    out.push(
      `NOISY: other processes used more than ${NOISY_PERCENT}% of the cores during ${noisy.map((run) => run.name).join(', ')} — rerun on a quiet machine before trusting those figures`,
    );
  }
  const failed = failedRuns(r);
  for (const run of failed) {
    out.push(
      `FLAGGED: ${run.name}: ${run.non2xx} non-2xx answers, ${run.errors} errors/timeouts (statuses: ${describeCounts(run.statuses)}) — its figures are not a clean measurement`,
    );
  }
  if (r.gatewayLog.length > 0) {
    out.push(`gateway logged ${r.gatewayLog.length} warn-or-worse lines; the first:`);
    out.push(
      ...r.gatewayLog.slice(0, 5).map(({ phase, line }) => `  [${phase}] ${line.slice(0, 300)}`),
    );
  } else {
    out.push('gateway logged nothing at warn or above');
  }
  return out.join('\n');
}

/** Scenario 4 (issue 32): one row per credential, medians over the gateway processes; the grant. */
function machineClientSection(r: BenchResults): string[] {
  const m = r.machineClients;
  const { settings } = r;
  const range = (x: { median: number; min: number; max: number }, digits = 0) =>
    Number.isNaN(x.median)
      ? '—'
      : `${x.median.toFixed(digits)} (${x.min.toFixed(digits)}–${x.max.toFixed(digits)})`;
  const rows = PRINCIPAL_ROWS.flatMap(({ key, name }) => {
    if (!m.processes.some((set) => set[key] !== undefined)) return [];
    return [
      [
        name,
        range(rowSpread(m, key, (run) => run.load.requestsPerSecond)),
        rowSpread(m, key, (run) => run.load.p99Ms).median.toFixed(2),
        range(rowSpread(m, key, (run) => run.load.serverCpuUsPerRequest)),
        redisPerRequest(m, key).toFixed(4),
        String(m.processes.reduce((n, set) => n + (set[key]?.load.non2xx ?? 0), 0)),
      ],
    ];
  });
  const grant = m.grant;
  return [
    `Scenario 4 — machine clients (issue 32): the scenario 1 request on the tenant-header route with each credential, on ${settings.processes} fresh gateway processes, each row measured in ${settings.rounds} interleaved rounds; medians over the processes (min–max)`,
    ...table(
      [
        'credential',
        'req/s (min–max)',
        'p99 ms',
        'server CPU µs/req (min–max)',
        'Redis cmd/req',
        'non-2xx',
      ],
      rows,
    ),
    ...(m.apiKeySkipped === undefined ? [] : [`  not run: API key row — ${m.apiKeySkipped}`]),
    ...table(RUN_HEADER, [
      runRow(grant.load),
      runRow({ ...r.storm.tokenAlone, name: 'GET /1/token (Basic login), alone (scenario 2)' }),
    ]),
    `  Redis commands per grant: ${grant.redisPerRequest.toFixed(2)} (${describeCounts(grant.byCommand)})`,
  ];
}

/**
 * Columns of a run. "server CPU" is what the process answering the load (the
 * upstream, the bare proxy, the gateway) spent per request, all threads;
 * "others' CPU" is what processes outside the benchmark used meanwhile, in %
 * of all cores.
 */
const RUN_HEADER = [
  'run',
  'req/s',
  'p50 ms',
  'p99 ms',
  'requests',
  'non-2xx',
  'errors',
  'server CPU µs/req',
  "others' CPU",
];

function formatVerdictValue(v: Verdict): string {
  const digits = v.unit === '' && Math.abs(v.value) < 0.1 ? 4 : 2;
  const range =
    v.range === undefined ? '' : ` (${v.range.min.toFixed(2)}–${v.range.max.toFixed(2)})`;
  return `${v.value.toFixed(digits)}${v.unit === '' ? '' : ` ${v.unit}`}${range}`;
}

function runRow(run: LoadResult): string[] {
  return [
    run.name,
    run.requestsPerSecond.toFixed(0),
    run.p50Ms.toFixed(2),
    run.p99Ms.toFixed(2),
    String(run.completed),
    String(run.non2xx),
    String(run.errors),
    run.serverCpuUsPerRequest === undefined ? '—' : run.serverCpuUsPerRequest.toFixed(0),
    run.othersCpuPercent === undefined ? '—' : `${run.othersCpuPercent.toFixed(0)}%`,
  ];
}

/** Left-aligned first column, right-aligned others, two spaces between. */
function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  return all.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function describeCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}

const fixed = (value: number): string => String(Number(value.toFixed(2)));
const mb = (value: number): string => `${value.toFixed(1)} MB`;
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
const listMs = (values: readonly number[]): string => values.map((v) => v.toFixed(2)).join(' ');
