/**
 * The Redis connection and its outage policy: fail closed. While Redis is
 * unreachable every command fails within the command timeout (no offline
 * queue, no waiting for a reconnect), so a request is refused with
 * `unavailable` rather than let in on a guess or left hanging; meanwhile the
 * client keeps reconnecting in the background and recovers by itself.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { REDIS_DEFAULTS } from '../config/schema/store.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { redisForDisplay } from './redis-display.js';

/** Options of {@link connectRedis}: the `store.redis` config. */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. Exactly one of url, sentinel, cluster. */
  url?: string | undefined;
  sentinel?:
    | {
        name: string;
        nodes: string[];
        password?: string | undefined;
        sentinelPassword?: string | undefined;
      }
    | undefined;
  cluster?: { nodes: string[] } | undefined;
  /** ACL user and password of the Redis nodes. */
  username?: string | undefined;
  password?: string | undefined;
  /** TLS (a `rediss://` URL turns it on too): `ca` is a PEM file's path. */
  tls?: { ca?: string | undefined; servername?: string | undefined } | undefined;
  /** How long one command may take before it fails. Default: `store.redis.commandTimeoutMs`'s. */
  commandTimeoutMs?: number;
  /** How long start-up keeps trying to reach Redis. Default: `store.redis.connectTimeoutMs`'s. */
  connectTimeoutMs?: number;
}

/** How long one command may take before it fails: as given, or the config's default. */
export function commandTimeoutOf(options: RedisConnectionOptions): number {
  return options.commandTimeoutMs ?? REDIS_DEFAULTS.commandTimeoutMs;
}

/** Reconnect backoff: 100 ms more per attempt, capped so recovery is quick. */
const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * Connects to Redis, retrying until `connectTimeoutMs` has passed (Redis may
 * start alongside the gateway). With `sentinel`, ioredis asks the sentinels
 * for the master on every (re)connect, so a failover is followed by itself.
 * @throws GatewayError `unavailable` naming where without any password.
 */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  const connectTimeoutMs = options.connectTimeoutMs ?? REDIS_DEFAULTS.connectTimeoutMs;
  let lastError: unknown;
  let redis: Redis | undefined;
  try {
    redis = createClient(options, connectTimeoutMs);
    // Failures reach callers as rejected commands; without a listener ioredis
    // would print every failed reconnect attempt to the console.
    redis.on('error', (err: unknown) => {
      lastError = err;
    });
    await waitUntilReady(redis, connectTimeoutMs);
    return redis;
  } catch (err) {
    redis?.disconnect();
    if (isGatewayError(err)) throw err;
    throw new GatewayError(
      'unavailable',
      `Cannot connect to Redis at ${redisForDisplay(options)} within ${connectTimeoutMs} ms.`,
      { cause: lastError ?? err },
    );
  }
}

function createClient(options: RedisConnectionOptions, connectTimeoutMs: number): Redis {
  const common: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutOf(options),
    connectTimeout: connectTimeoutMs,
    // A command that timed out was reported as failed; replaying it after a
    // reconnect could apply a write (a password change) the caller gave up on.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.password === undefined ? {} : { password: options.password }),
  };
  const tls = tlsOptions(options);
  if (options.url !== undefined) {
    return new Redis(options.url, { ...common, ...(tls === undefined ? {} : { tls }) });
  }
  if (options.sentinel !== undefined) {
    const { name, nodes, password, sentinelPassword } = options.sentinel;
    return new Redis({
      ...common,
      name,
      sentinels: nodes.map(hostAndPort),
      ...(password === undefined ? {} : { password }),
      ...(sentinelPassword === undefined ? {} : { sentinelPassword }),
      sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
      ...(tls === undefined ? {} : { tls, enableTLSForSentinelMode: true, sentinelTLS: tls }),
    });
  }
  const { lazyConnect: _lazy, enableOfflineQueue: _queue, ...nodeOptions } = common;
  // The commands API is the same (ioredis's Commander); what differs — where
  // a key lives, who publishes — is asked through `redis-topology.ts`.
  return new Cluster((options.cluster as { nodes: string[] }).nodes.map(hostAndPort), {
    lazyConnect: true,
    enableOfflineQueue: false,
    // No waiting for a slot refresh or a failover inside a command: the
    // command timeout bounds it, and the caller answers 503.
    maxRedirections: 3,
    retryDelayOnFailover: 50,
    retryDelayOnClusterDown: 50,
    retryDelayOnTryAgain: 50,
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    redisOptions: { ...nodeOptions, ...(tls === undefined ? {} : { tls }) },
  }) as unknown as Redis;
}

function tlsOptions(options: RedisConnectionOptions): ConnectionOptions | undefined {
  const wanted = options.tls !== undefined || options.url?.startsWith('rediss:') === true;
  if (!wanted) return undefined;
  return {
    ...(options.tls?.ca === undefined ? {} : { ca: readFileSync(options.tls.ca) }),
    ...(options.tls?.servername === undefined ? {} : { servername: options.tls.servername }),
  };
}

/** `10.0.0.5:26379` or `[fd00::1]:26379` as ioredis wants it. */
function hostAndPort(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(':');
  return {
    host: node.slice(0, colon).replace(/^\[|\]$/g, ''),
    port: Number(node.slice(colon + 1)),
  };
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
