/**
 * The Redis connection and its outage policy: fail closed. While Redis is
 * unreachable every command fails within the command timeout (no offline
 * queue, no waiting for a reconnect), so a request is refused with
 * `unavailable` rather than let in on a guess or left hanging; meanwhile the
 * client keeps reconnecting in the background and recovers by itself.
 */
import { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';

/** Options of {@link connectRedis}. */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** How long one command may take before it fails. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** How long start-up keeps trying to reach Redis. Default 5000 ms. */
  connectTimeoutMs?: number;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 1000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/** Reconnect backoff: 100 ms more per attempt, capped so recovery is quick. */
const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * Connects to Redis, retrying until `connectTimeoutMs` has passed (Redis may
 * start alongside the gateway).
 * @throws GatewayError `unavailable` naming the URL without its password.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  let lastError: unknown;
  let redis: Redis | undefined;
  try {
    redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: connectTimeoutMs,
      // A command that timed out was reported as failed; replaying it after a
      // reconnect could apply a write (a password change) the caller gave up on.
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    // Failures reach callers as rejected commands; without a listener ioredis
    // would print every failed reconnect attempt to the console.
    redis.on('error', (err: unknown) => {
      lastError = err;
    });
    await waitUntilReady(redis, connectTimeoutMs);
    return redis;
  } catch (err) {
    redis?.disconnect();
    throw new GatewayError(
      'unavailable',
      `Cannot connect to Redis at ${redisUrlForDisplay(options.url)} within ${connectTimeoutMs} ms.`,
      { cause: lastError ?? err },
    );
  }
}

/**
 * The URL with its password (and query, which ioredis also reads options such
 * as `password` from) removed: safe for logs and error messages.
 */
export function redisUrlForDisplay(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    // An unparsable URL may still hold a secret: show none of it.
    return '(unparsable Redis URL)';
  }
}

function waitUntilReady(redis: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`Redis not ready after ${timeoutMs} ms.`));
    }, timeoutMs);
    redis.once('ready', onReady);
    // A failed first attempt rejects here; the retry strategy keeps trying
    // until the timer above gives up.
    redis.connect().catch(() => undefined);
  });
}
