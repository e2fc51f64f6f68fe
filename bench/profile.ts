/**
 * Where a proxied request's CPU goes, by component (`npm run build`, then
 * `npx tsx bench/profile.ts`): the bare proxy, the bare proxy + headers
 * and the gateway are each started with `node --cpu-prof`, warmed up, loaded
 * with autocannon (the same request as `npm run bench`), and stopped; their
 * profiles' steady-state samples are printed as µs of CPU per request, per
 * component, side by side. Not part of `npm run bench`: a profiler slows what
 * it watches, so these are for comparing components, not for the targets.
 *
 * Environment: BENCH_SECONDS (measured seconds per target, default 10),
 * BENCH_WARMUP_SECONDS (default 3), BENCH_PROCESSES (fresh processes per
 * target, averaged, default 2), BENCH_CONNECTIONS (default 50).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { comparedProxies, startBackends, type ComparedProxy } from './backends.js';
import { summarizeProfile, type ProfileSummary } from './cpu-profile.js';
import { REQUEST_PATH } from './gateway-config.js';
import { positiveInt } from './env.js';
import { drive, type LoadTarget } from './load.js';
import {
  createTeardown,
  MACHINE_CORES,
  PROJECT_ROOT,
  runMain,
  spawnNode,
  waitForPort,
} from './processes.js';

/** One sample per 200 µs: a request is ~100–400 µs of CPU here, so thousands of samples per component. */
const SAMPLE_INTERVAL_US = 200;

const settings = {
  seconds: positiveInt('BENCH_SECONDS', 10),
  warmupSeconds: positiveInt('BENCH_WARMUP_SECONDS', 3),
  processes: positiveInt('BENCH_PROCESSES', 2),
  connections: positiveInt('BENCH_CONNECTIONS', 50),
};
const teardown = createTeardown();
const profiles = mkdtempSync(join(tmpdir(), 'tg-bench-profiles-'));
teardown.add(() => rmSync(profiles, { recursive: true, force: true }));

async function main(): Promise<void> {
  const backends = await startBackends(teardown);
  const proxies = await comparedProxies(backends);
  const summaries = new Map<string, Measured[]>();
  for (let set = 1; set <= settings.processes; set++) {
    for (const [index, proxy] of proxies.entries()) {
      progress(`${proxy.name}: process ${set} of ${settings.processes}`);
      const dir = join(profiles, `${set}-${index}`);
      const list = summaries.get(proxy.name) ?? [];
      list.push(await profileOne(proxy, dir, backends.headers));
      summaries.set(proxy.name, list);
    }
  }
  process.stdout.write(`\n${formatTable(summaries)}\n`);
}

interface Measured {
  summary: ProfileSummary;
  requestsPerSecond: number;
}

/** Starts `subject` under the profiler, warms it up, measures, stops it, and reads its main thread's profile. */
async function profileOne(
  proxy: ComparedProxy,
  dir: string,
  headers: Record<string, string>,
): Promise<Measured> {
  const proc = spawnNode(proxy.name, [...profilerFlags(dir), ...proxy.nodeArgs], PROJECT_ROOT);
  teardown.add(() => proc.stop());
  await waitForPort(proc, proxy.port, 30_000);
  const target: LoadTarget = {
    name: proxy.name,
    url: `http://127.0.0.1:${proxy.port}${REQUEST_PATH}`,
    connections: settings.connections,
    headers,
  };
  await drive(target, { seconds: settings.warmupSeconds });
  const startedAt = performance.now();
  const run = await drive(target, { seconds: settings.seconds });
  const endedAt = performance.now();
  if (run.non2xx > 0 || run.errors > 0) {
    throw new Error(`${proxy.name}: ${run.non2xx} non-2xx answers, ${run.errors} errors`);
  }
  await proc.stop();
  // The window is counted back from the process's exit. The profile stops a
  // little earlier (it is written out first, tens of ms), so the window slides
  // that far into the warm-up, which ran the same load.
  const stoppedAt = performance.now();
  const summary = summarizeProfile(
    join(dir, mainThreadProfile(dir, proc.pid)),
    {
      fromEndUs: (stoppedAt - startedAt) * 1000,
      toEndUs: (stoppedAt - endedAt) * 1000,
    },
    run.completed,
  );
  return { summary, requestsPerSecond: run.completed / run.seconds };
}

function profilerFlags(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`];
}

/** `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`: thread 0 is the main thread. */
function mainThreadProfile(dir: string, pid: number): string {
  const name = readdirSync(dir).find((file) => file.includes(`.${pid}.0.`));
  if (name === undefined) throw new Error(`no CPU profile of process ${pid} in ${dir}`);
  return name;
}

function formatTable(summaries: Map<string, Measured[]>): string {
  const names = [...summaries.keys()];
  const mean = (name: string, pick: (m: Measured) => number): number => {
    const list = summaries.get(name) ?? [];
    return list.reduce((sum, m) => sum + pick(m), 0) / list.length;
  };
  const components = new Set<string>();
  for (const list of summaries.values())
    for (const { summary } of list) for (const c of summary.keys()) components.add(c);
  const rows = [...components].map((component) => ({
    component,
    values: names.map((name) => mean(name, (m) => m.summary.get(component) ?? 0)),
  }));
  rows.sort((a, b) => Math.max(...b.values) - Math.max(...a.values));
  const lastLabel = 'requests/s under profiler';
  const width = Math.max(...rows.map((r) => r.component.length), lastLabel.length);
  const line = (label: string, values: number[]) =>
    `${label.padEnd(width)}${values.map((v) => v.toFixed(1).padStart(22)).join('')}`;
  return [
    `CPU per proxied request by component, µs (self time, steady state; mean of ${settings.processes} processes each;`,
    `${MACHINE_CORES} cores; ${settings.connections} connections, ${settings.seconds} s measured after ${settings.warmupSeconds} s of warm-up)`,
    '',
    `${''.padEnd(width)}${names.map((n) => n.padStart(22)).join('')}`,
    ...rows.map((r) => line(r.component, r.values)),
    line(
      'total',
      names.map((name) => mean(name, (m) => sum(m.summary.values()))),
    ),
    line(
      lastLabel,
      names.map((name) => mean(name, (m) => m.requestsPerSecond)),
    ),
  ].join('\n');
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

function progress(message: string): void {
  process.stderr.write(`» ${message}\n`);
}

runMain('profile', main, teardown);
