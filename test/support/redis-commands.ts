/**
 * What a Redis has been asked, from `INFO commandstats`, for tests that hold
 * a path to "no store call": the data commands apart from the background
 * ones an instance sends whatever its traffic — heartbeat PINGs on its event
 * subscription and, in lease mode, its lease renewals (one script call four
 * times per lease length).
 */
import { connect, type Socket } from 'node:net';
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
 *
 * MONITOR on a socket of its own, not ioredis's `monitor()`: that one marks
 * its connection as monitoring only a tick after MONITOR's `+OK`, so the
 * lines a busy Redis sends in the same read are taken for replies ("Command
 * queue state error", an uncaught exception: CI met it).
 */
export async function plainCommandsDuring(
  redis: Redis,
  run: () => Promise<void>,
): Promise<string[]> {
  const marker = `end-of-run-${Math.random()}`;
  const seen: string[] = [];
  let markerSeen: () => void = () => {};
  const ended = new Promise<void>((done) => (markerSeen = done));
  const monitor = await rawMonitor(redis, (args, source) => {
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
    monitor.destroy();
  }
}

/**
 * A MONITOR connection to `redis`'s server; resolves once Redis said `+OK`
 * (every command it runs from then on reaches `onCommand`, with its source:
 * `lua` or the client's address).
 */
function rawMonitor(
  redis: Redis,
  onCommand: (args: string[], source: string) => void,
): Promise<Socket> {
  const { host, port, password, username } = redis.options;
  const socket = connect(port ?? 6379, host ?? '127.0.0.1');
  socket.setEncoding('latin1');
  const auth = password === undefined || password === null ? [] : [username ?? 'default', password];
  socket.write(`${auth.length === 0 ? '' : resp(['AUTH', ...auth])}${resp(['MONITOR'])}`);
  return new Promise<Socket>((resolve, reject) => {
    let buffered = '';
    let oks = auth.length === 0 ? 1 : 2;
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (oks > 0) {
          if (line !== '+OK') return reject(new Error(`MONITOR refused: ${line}`));
          if (--oks === 0) resolve(socket);
          continue;
        }
        const parsed = MONITOR_LINE.exec(line);
        if (parsed !== null) onCommand(quoted(parsed[2] as string), parsed[1] as string);
      }
    });
  });
}

/** `+<time> [<db> <source>] "<command>" "<arg>" …` */
const MONITOR_LINE = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$/;

/** The quoted words of a MONITOR line, unescaped as far as the tests read them (`\"`, `\\`). */
function quoted(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) =>
    (m[1] as string).replace(/\\(["\\])/g, '$1'),
  );
}

/** A command in RESP. */
function resp(words: string[]): string {
  return `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`;
}
