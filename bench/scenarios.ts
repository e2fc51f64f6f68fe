/**
 * The scenarios of issues 4 and 13's benchmark, each against processes
 * already running: the gateway beside the bare Node proxies and the C peers
 * at saturation, latency at a fixed rate, proxied load during a login storm,
 * and memory over a million requests.
 */
import { basicAuthorization, BENCH_TENANT } from './gateway-config.js';
import { drive, summarize, type LoadResult, type LoadTarget } from './load.js';
import { drivePaced, type PacedRun } from './paced-load.js';
import type { LoginCeiling } from './login-ceiling.js';
import { peakRssMb, rssMb } from './processes.js';
import { commandsBetween, EXCLUDED_COMMANDS, readCommandCounts } from './redis-stats.js';
import type {
  LatencyScenario,
  SoakScenario,
  StormScenario,
  TargetRuns,
  ThroughputScenario,
} from './results.js';
import { Tally } from './tally.js';
import type { BenchWorld } from './world.js';

/** Connections of the login storm. */
export const STORM_CONNECTIONS = 8;
const SOAK_FIRST = 50_000;
const SOAK_TOTAL = 1_000_000;
/** RSS is read after every step; SOAK_FIRST and SOAK_TOTAL are multiples of it. */
const SOAK_STEP = 50_000;

/** A warm-up run, summarized: only checked for failures. */
async function warmUp(world: BenchWorld, target: LoadTarget): Promise<LoadResult> {
  const run = await drive(target, { seconds: world.settings.warmupSeconds });
  return summarize(`${target.name} (warm-up)`, [run]);
}

/**
 * Scenario 1: every target of `world.targets` (direct, the C peers, the bare
 * Node proxies, the gateway). Measured on `processes` fresh sets of proxy
 * processes in turn: two starts of the very same program serve at rates up
 * to ±20 % apart on this kind of machine (code placement, GC timing), so one
 * process's luck must not decide a ratio. Within a set, each target is warmed
 * up, then measured in `rounds` interleaved slices (direct, nginx, …,
 * gateway, direct, …): a machine that slows down mid-run — a neighbour, the
 * host — then skews all targets alike instead of whichever ran last.
 */
export async function throughputScenario(
  world: BenchWorld,
  path: string,
): Promise<{ scenario: ThroughputScenario; warmups: LoadResult[] }> {
  const { connections, seconds, rounds, processes } = world.settings;
  const warmups: LoadResult[] = [];
  const counted = new Map<string, number>();
  const excluded = new Map<string, number>();
  const sets: TargetRuns[] = [];
  const tallies = world.targets.map(
    ({ key, name }) => new Tally(name, () => world.pid(key), world.pids),
  );
  let rssBefore = { bare: 0, gateway: 0 };

  for (let set = 1; set <= processes; set++) {
    if (set > 1) {
      world.progress(`process set ${set}/${processes}: restarting the proxies`);
      await world.restartProxies();
    }
    // Every target gets the very same request (token and tenant header
    // included), so the difference is what a proxy does, not what it reads.
    const { headers } = await world.proxiedTarget();
    const loads = world.targets.map(({ key, name, url }, i) => ({
      key,
      tally: tallies[i] as Tally,
      target: { name, url: url + path, connections, headers },
    }));
    const from = tallies.map((tally) => tally.length);

    for (const { target } of loads) {
      world.progress(`${target.name}: warm-up ${world.settings.warmupSeconds} s`);
      warmups.push(await warmUp(world, target));
    }
    rssBefore = { bare: rssMb(world.pid('bare')), gateway: rssMb(world.pid('gateway')) };
    for (let round = 1; round <= rounds; round++) {
      world.progress(
        `set ${set}/${processes}, round ${round}/${rounds}: ${seconds / rounds} s on each target`,
      );
      for (const { key, tally, target } of loads) {
        const before = key === 'gateway' ? await readCommandCounts(world.redisPort) : undefined;
        await tally.add(() => drive(target, { seconds: seconds / rounds }));
        if (before === undefined) continue;
        const delta = commandsBetween(before, await readCommandCounts(world.redisPort));
        addCounts(counted, delta.counted);
        addCounts(excluded, delta.excluded);
      }
    }
    sets.push(Object.fromEntries(loads.map(({ key, tally }, i) => [key, tally.result(from[i])])));
  }

  const totals: TargetRuns = Object.fromEntries(
    world.targets.map(({ key }, i) => [key, (tallies[i] as Tally).result()]),
  );
  const gatewayCompleted = totals.gateway?.completed ?? 0;
  const countedTotal = [...counted.values()].reduce((a, b) => a + b, 0);
  return {
    scenario: {
      totals,
      processes: sets,
      skipped: world.skipped,
      peers: world.peers,
      redis: {
        excludedPatterns: EXCLUDED_COMMANDS,
        counted: Object.fromEntries(counted),
        excluded: Object.fromEntries(excluded),
        perRequest: countedTotal / Math.max(1, gatewayCompleted),
      },
      rssMb: {
        before: rssBefore.gateway,
        after: rssMb(world.pid('gateway')),
        peak: peakRssMb(world.pid('gateway')),
      },
      bareRssMb: { before: rssBefore.bare, after: rssMb(world.pid('bare')) },
    },
    warmups,
  };
}

/**
 * Scenario 2: the token endpoint alone, then the proxied load and the login
 * storm together. `without` is scenario 1's gateway measurement.
 */
export async function stormScenario(
  world: BenchWorld,
  proxied: LoadTarget,
  without: LoadResult,
  ceiling: LoginCeiling,
): Promise<{ scenario: StormScenario; warmups: LoadResult[] }> {
  const token: LoadTarget = {
    name: 'GET /1/token',
    url: `${world.gatewayUrl}/1/token?tenant_id=${BENCH_TENANT}`,
    connections: STORM_CONNECTIONS,
    headers: { authorization: basicAuthorization() },
  };
  const { warmupSeconds, seconds } = world.settings;
  const measured = { seconds };

  // Alone first: the ceiling assumes the cores are the pool's; during the
  // storm they are shared with the proxied load and its load generator.
  world.progress(`GET /1/token alone: warm-up ${warmupSeconds} s, then ${seconds} s measured`);
  const aloneWarmup = await warmUp(world, token);
  const alone = new Tally('GET /1/token alone', () => world.pid('gateway'), world.pids);
  await alone.add(() => drive(token, measured));

  world.progress(
    `login storm: ${STORM_CONNECTIONS} connections on GET /1/token beside the proxied load`,
  );
  const stormWarmups = await Promise.all([warmUp(world, proxied), warmUp(world, token)]);
  // No server CPU per request: the gateway's CPU now goes to both loads.
  const withStorm = new Tally('gateway during storm', () => undefined, world.pids);
  const during = new Tally('GET /1/token during storm', () => undefined, world.pids);
  await Promise.all([
    withStorm.add(() => drive(proxied, measured)),
    during.add(() => drive(token, measured)),
  ]);
  return {
    scenario: {
      without,
      with: withStorm.result(),
      token: during.result(),
      tokenAlone: alone.result(),
      ceiling,
      peakRssMb: peakRssMb(world.pid('gateway')),
    },
    warmups: [aloneWarmup, ...stormWarmups],
  };
}

/**
 * Scenario 3: a fresh gateway's RSS after 50,000 and after 1,000,000 proxied
 * requests, read after every 50,000 on the way, so that a plateau (the heap
 * settling) can be told from a steady climb (a leak).
 */
export async function soakScenario(world: BenchWorld): Promise<SoakScenario> {
  world.progress('soak: restarting the gateway, so that its first requests are the soak');
  await world.restartGateway();
  const target = await world.proxiedTarget();
  const first = new Tally('first 50,000', () => world.pid('gateway'), world.pids);
  const rest = new Tally('next 950,000', () => world.pid('gateway'), world.pids);
  const series: number[] = [];
  for (let done = 0; done < SOAK_TOTAL; done += SOAK_STEP) {
    if (done % 200_000 === 0) world.progress(`soak: ${done} of ${SOAK_TOTAL} requests`);
    await (done < SOAK_FIRST ? first : rest).add(() => drive(target, { amount: SOAK_STEP }));
    series.push(rssMb(world.pid('gateway')));
  }
  return {
    first: first.result(),
    rest: rest.result(),
    rssMb: {
      after50k: series[SOAK_FIRST / SOAK_STEP - 1] as number,
      after1M: series.at(-1) as number,
      every50k: series,
      peak: peakRssMb(world.pid('gateway')),
    },
  };
}

function addCounts(into: Map<string, number>, from: Map<string, number>): void {
  for (const [key, n] of from) into.set(key, (into.get(key) ?? 0) + n);
}

/** Rate (per target) and connections of the latency scenario: well below saturation on two cores. */
export const LATENCY_RATE = 1000;
const LATENCY_CONNECTIONS = 10;

/**
 * Latency without queueing: the bare proxy and the gateway at a fixed,
 * evenly paced rate far below what either can serve, so p99 shows what the
 * gateway adds to a request rather than how long requests wait behind each
 * other (scenario 1 runs at saturation, where p99 is mostly queue). Paced by
 * paced-load.ts, not autocannon, whose rate comes in bursts.
 *
 * Both targets in the same run, their requests interleaved one by one, on
 * connections opened before the clock starts. On this kind of machine a
 * proxied request now and then stalls for 10–40 ms (the worst of them line up
 * with a fresh Erlang VM the machine's RabbitMQ starts every minute); such a
 * stall now lands on both targets in the same second, where measuring them
 * one after the other put it on one target only, and a handful of them
 * decided the difference. The median over the seconds of the gateway's p99
 * minus the bare proxy's is the typical cost a request pays; the pooled
 * figures (the tail, stalls included) are reported beside it.
 */
export async function latencyScenario(
  world: BenchWorld,
  proxied: LoadTarget,
  path: string,
): Promise<LatencyScenario> {
  // As long as the two targets' rounds one after the other took; each target is now sampled
  // throughout. p99 is also taken second by second: 1,000 requests a target, its 10th worst.
  const seconds = world.settings.seconds * 2;
  const common = { connections: LATENCY_CONNECTIONS, headers: proxied.headers ?? {} };
  // Bare undici too, where it runs: the gateway's own core (issue 35's p99 target).
  const undici = world.targets.find((t) => t.key === 'undici');
  const loads = [
    { name: 'bare http-proxy-3', url: world.bareUrl + path, pid: world.pid('bare') },
    { name: 'gateway', url: proxied.url, pid: world.pid('gateway') },
    ...(undici === undefined
      ? []
      : [{ name: 'bare undici', url: undici.url + path, pid: world.pid('undici') }]),
  ].map(({ name, url, pid }) => {
    const label = `${name} at ${LATENCY_RATE} req/s`;
    return {
      target: { ...common, name: label, url },
      tally: new Tally(label, () => pid, world.pids),
    };
  });
  world.progress(`latency: ${seconds} s at ${LATENCY_RATE} req/s on each target, interleaved`);
  const tallies = loads.map((load) => load.tally);
  const [bare, gateway, bareUndici] = (await Tally.together(tallies, () =>
    drivePaced(
      loads.map((load) => load.target),
      LATENCY_RATE,
      seconds,
    ),
  )) as [PacedRun, PacedRun, PacedRun | undefined];
  const [bareTally, gatewayTally, undiciTally] = tallies as [Tally, Tally, Tally | undefined];
  const secondP99Ms = (run: PacedRun) =>
    run.perSecond.map((latencies) => latencies.percentile(99) / 1000);
  return {
    rate: LATENCY_RATE,
    bare: bareTally.result(),
    gateway: gatewayTally.result(),
    ...(undiciTally === undefined ? {} : { undici: undiciTally.result() }),
    secondP99Ms: {
      bare: secondP99Ms(bare),
      gateway: secondP99Ms(gateway),
      ...(bareUndici === undefined ? {} : { undici: secondP99Ms(bareUndici) }),
    },
  };
}

export type { BenchWorld };
