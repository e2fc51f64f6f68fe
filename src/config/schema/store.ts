/**
 * Where users, tenants and sessions live: the embedded in-memory store, or a
 * Redis (one server, Sentinel or Cluster) every instance shares.
 */
import { z } from 'zod';
import { integer } from './values.js';

/**
 * The timeouts of `store.redis`, written once: the schema's defaults, and
 * what the Redis store falls back to for a caller that leaves them out.
 */
export const REDIS_DEFAULTS = {
  commandTimeoutMs: 1000,
  connectTimeoutMs: 5000,
} as const;

const redisUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'redis:' || url.protocol === 'rediss:';
    } catch {
      return false;
    }
  }, 'must be a redis:// or rediss:// URL')
  .meta({ typeName: '`redis://` or `rediss://` URL' });

/** `host:port`, a bracketed IPv6 address allowed (`[fd00::1]:6379`). */
const hostPort = z
  .string()
  .refine((value) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
    return match !== null && Number(match[2]) > 0 && Number(match[2]) <= 65535;
  }, 'must be host:port (10.0.0.5:26379, [fd00::1]:6379)')
  .meta({ typeName: '`host:port`' });

const redisNodes = z.array(hostPort).min(1, 'must name at least one node');

/** Through ioredis's own client for each of `url`, `sentinel`, `cluster`. */
const redis = z
  .strictObject({
    url: redisUrl
      .optional()
      .describe(
        'a single Redis server (`redis://:${REDIS_PASSWORD}@host:6379/0`). Exactly one of `url`, `sentinel`, `cluster`',
      ),
    sentinel: z
      .strictObject({
        name: z.string().min(1).describe("the master group's name, as the sentinels know it"),
        nodes: redisNodes.describe(
          'sentinels as `host:port` (`10.0.0.5:26379`, `[fd00::1]:26379`)',
        ),
        password: z
          .string()
          .min(1)
          .optional()
          .describe('password of the Redis nodes (or set `store.redis.password`; not both)'),
        sentinelPassword: z
          .string()
          .min(1)
          .optional()
          .describe('password of the sentinels themselves, when they require one'),
      })
      .optional()
      .describe(
        'Redis Sentinel: the gateway asks the sentinels for the master and follows a failover by itself. Writes wait for one replica (`WAIT`)',
      ),
    cluster: z
      .strictObject({
        nodes: redisNodes.describe(
          'any few nodes as `host:port` (`10.0.0.7:6379`); the rest are discovered',
        ),
      })
      .optional()
      .describe(
        "Redis Cluster. Session events are heard on every master; writes wait for a replica of their slot's master",
      ),
    username: z
      .string()
      .min(1)
      .optional()
      .describe('Redis ACL user of the Redis nodes (or in the URL)'),
    password: z
      .string()
      .min(1)
      .optional()
      .describe(
        'password of the Redis nodes (or in the URL); `sentinel.password` is the same for Sentinel (set one)',
      ),
    tls: z
      .strictObject({
        ca: z
          .string()
          .min(1)
          .optional()
          .describe('PEM file of the CA that signed Redis (relative to the config file)'),
        servername: z.string().min(1).optional().describe('the name checked and sent as SNI'),
      })
      .optional()
      .describe(
        'TLS for Sentinel or Cluster (sentinels and nodes), or the CA and SNI of a `rediss://` URL',
      ),
    keyPrefix: z.string().min(1).max(64).default('tg:').describe('every key starts with it'),
    commandTimeoutMs: integer(50, 60_000)
      .default(REDIS_DEFAULTS.commandTimeoutMs)
      .describe('a store call slower than this fails (→ 503): the gateway never hangs on Redis'),
    connectTimeoutMs: integer(100, 120_000)
      .default(REDIS_DEFAULTS.connectTimeoutMs)
      .describe('how long start-up waits for Redis'),
  })
  .superRefine((value, ctx) => {
    const shapes = (['url', 'sentinel', 'cluster'] as const).filter((k) => value[k] !== undefined);
    if (shapes.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          shapes.length === 0
            ? 'needs one of url, sentinel, cluster'
            : `takes exactly one of url, sentinel, cluster (has ${shapes.join(', ')})`,
      });
    }
    if (value.sentinel?.password !== undefined && value.password !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinel', 'password'],
        message: 'set either this or store.redis.password, not both',
      });
    }
    if (value.tls !== undefined && value.url?.startsWith('redis:')) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message: 'applies to a rediss:// url (this one is redis://)',
      });
    }
  });

/** The `store` section: Redis, or (omitted) the embedded in-memory store. */
export const store = z
  .strictObject({
    redis: redis
      .optional()
      .describe(
        'Redis shared by all instances. Omitted: the embedded in-memory store (one instance)',
      ),
  })
  .meta({
    description:
      'Where users, tenants and sessions live. Omit `store` (or `store.redis`) for the embedded in-memory store.',
    examples: [{ redis: { url: 'redis://:${REDIS_PASSWORD}@redis:6379/0', keyPrefix: 'tg:' } }],
  })
  .prefault({});
