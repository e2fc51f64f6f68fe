/**
 * What a Redis has been asked, from `INFO commandstats`, for tests that hold
 * a path to "no store call": the data commands apart from the background
 * ones an instance sends whatever its traffic — heartbeat PINGs on its event
 * subscription and, in lease mode, its lease renewals (one script call four
 * times per lease length).
 */
import type { Redis } from 'ioredis';

export interface CommandCounts {
  /** Commands a request could cause: everything but the background ones and the test's own. */
  data: number;
  /**
   * Script calls (`EVALSHA`/`EVAL`) and the sorted-set commands run inside
   * them (Redis counts those too): the lease renewals in the background — the
   * store keeps nothing else in a sorted set.
   */
  scripts: number;
}

const BACKGROUND = new Set(['ping', 'info', 'subscribe', 'client|kill', 'client|list']);
const SCRIPTS = new Set(['evalsha', 'eval', 'time', 'zremrangebyscore', 'zscore', 'zadd']);
/** Commands one renewal counts as: the script call and the four commands in it. */
const PER_RENEWAL = 5;

export async function commandCounts(redis: Redis): Promise<CommandCounts> {
  const counts = { data: 0, scripts: 0 };
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line.trim());
    if (m === null || BACKGROUND.has(m[1] as string)) continue;
    counts[SCRIPTS.has(m[1] as string) ? 'scripts' : 'data'] += Number(m[2]);
  }
  return counts;
}

/**
 * The most script commands (as {@link CommandCounts.scripts} counts them)
 * the lease renewals of `instances` gateways with leases of `leaseMs` can
 * cause in `elapsedMs`: four renewals per lease length, plus the one each may
 * have under way at either end.
 */
export function leaseRenewals(instances: number, leaseMs: number, elapsedMs: number): number {
  return instances * (Math.ceil(elapsedMs / (leaseMs / 4)) + 2) * PER_RENEWAL;
}

/** What `redis` was asked while `run` ran, and how long that took. */
export async function commandsDuring(
  redis: Redis,
  run: () => Promise<void>,
): Promise<CommandCounts & { elapsedMs: number }> {
  const before = await commandCounts(redis);
  const started = performance.now();
  await run();
  const elapsedMs = performance.now() - started;
  const after = await commandCounts(redis);
  return { data: after.data - before.data, scripts: after.scripts - before.scripts, elapsedMs };
}

/**
 * The data commands clients sent `redis` while `run` ran, one by one, as
 * MONITOR shows them: no script call and nothing a script ran (the lease
 * renewals and the last-use flush of API keys, background work on a timer of
 * each instance), nor the background commands above. The commands of a
 * request that reads the store, and nothing a timer adds.
 */
export async function plainCommandsDuring(
  redis: Redis,
  run: () => Promise<void>,
): Promise<string[]> {
  const monitor = await redis.monitor();
  const marker = `end-of-run-${Math.random()}`;
  const seen: string[] = [];
  let markerSeen: () => void = () => {};
  const ended = new Promise<void>((done) => (markerSeen = done));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const command = (args[0] ?? '').toLowerCase();
    if (command === 'echo' && args[1] === marker) markerSeen();
    else if (source !== 'lua' && !BACKGROUND.has(command) && !SCRIPTS.has(command))
      seen.push(command);
  });
  try {
    await run();
    // MONITOR feeds commands in the order Redis ran them: once the marker is seen, so is every command before it.
    await redis.echo(marker);
    await ended;
    return seen;
  } finally {
    monitor.disconnect();
  }
}
