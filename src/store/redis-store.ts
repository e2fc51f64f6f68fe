/**
 * The store kept in Redis (layout in `redis-keys.ts`). Each concern is a file
 * of its own (`redis-users.ts`, `redis-tenants.ts`, `redis-memberships.ts`,
 * `redis-revocations.ts`, `redis-clients.ts`, `redis-api-keys.ts`,
 * `redis-refresh.ts`, `redis-idps.ts`, `redis-sso.ts`, `redis-domains.ts`,
 * `redis-browser-sessions.ts`, `redis-passkeys.ts`, `redis-totp.ts`, `redis-invitations.ts`); this connects, brings the IdP index of
 * earlier versions up to date (`redis-idp-index.ts`), and assembles them over
 * one context (`redis-context.ts`).
 */
import { attempt } from './redis-attempt.js';
import { commandTimeoutOf, connectRedis, type RedisConnectionOptions } from './redis-connection.js';
import { redisLoginCounters } from './login-counters.js';
import { redisApiKeys } from './redis-api-keys.js';
import { redisAuditLogs } from './redis-audit.js';
import { redisBrowserSessions } from './redis-browser-sessions.js';
import { redisClients } from './redis-clients.js';
import type { RedisStoreContext } from './redis-context.js';
import { redisDomains } from './redis-domains.js';
import { redisInvitations } from './redis-invitations.js';
import { indexStoredIdps } from './redis-idp-index.js';
import { redisIdps } from './redis-idps.js';
import { redisMemberships } from './redis-memberships.js';
import { redisPasskeys } from './redis-passkeys.js';
import { redisRateLeases } from './redis-rate-leases.js';
import { redisRefreshFamilies } from './redis-refresh.js';
import { createRedisKeys } from './redis-keys.js';
import { redisRevocations } from './redis-revocations.js';
import { redisTenants } from './redis-tenants.js';
import { redisTopology } from './redis-topology.js';
import { redisTotp } from './redis-totp.js';
import { redisUsers } from './redis-users.js';
import { redisSso } from './redis-sso.js';
import { replicatedWrites } from './redis-write-acks.js';
import { defineStoreScripts } from './redis-scripts.js';
import type { SessionEvent, SessionEventListener, Store } from './types.js';

export { redisUrlForDisplay } from './redis-display.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions extends RedisConnectionOptions {
  /** Start of every key, e.g. `tg:`; must not contain `{` or `}`. */
  keyPrefix: string;
}

/**
 * Connects to Redis and returns the store kept there. Fails closed: any Redis
 * failure of a store method rejects with `unavailable` (the original error as
 * `cause`), and the client keeps reconnecting in the background.
 * @throws GatewayError `unavailable` when Redis cannot be reached within
 * `connectTimeoutMs`; the message names the URL without its password.
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const keys = createRedisKeys(options.keyPrefix);
  const redis = defineStoreScripts(await connectRedis(options));
  const topology = redisTopology(redis);
  /** This store's own watchers (see `RedisStoreContext.tellWatchers`). */
  const watchers = new Set<SessionEventListener>();
  const context: RedisStoreContext = {
    redis,
    keys,
    replicated: replicatedWrites(topology, options),
    tellWatchers: (event: SessionEvent) => {
      for (const watcher of watchers) watcher.onEvent(event);
    },
  };
  try {
    // Records stored before the issuer + client id index (issue 42) join it.
    await indexStoredIdps(context);
  } catch (err) {
    redis.disconnect();
    throw err;
  }

  return {
    users: redisUsers(context),
    tenants: redisTenants(context),
    memberships: redisMemberships(context),
    clients: redisClients(context),
    apiKeys: redisApiKeys(context),
    refresh: redisRefreshFamilies(context),
    idps: redisIdps(context),
    sso: redisSso(context),
    domains: redisDomains(context),
    invitations: redisInvitations(context),
    revocations: redisRevocations(context, topology, watchers),
    browserSessions: redisBrowserSessions(context),
    passkeys: redisPasskeys(context),
    totp: redisTotp(context),

    loginCounter: redisLoginCounters(redis, options.keyPrefix),

    // A blocking read must end before the command timeout fails it.
    auditLog: redisAuditLogs(redis, keys, Math.max(50, Math.floor(commandTimeoutOf(options) / 2))),

    leaseRates: redisRateLeases(redis, options.keyPrefix),

    async ping(): Promise<void> {
      await attempt(() => redis.ping());
    },

    async close(): Promise<void> {
      try {
        await redis.quit();
      } catch {
        // Already closed, or Redis is down: drop the socket and stop reconnecting.
        redis.disconnect();
      }
    },
  };
}
