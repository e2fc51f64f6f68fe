import { attempt } from './redis-attempt.js';
import { GatewayError } from '../errors.js';
import { compareIds, normaliseEmail, revocationDeadlineMs, tenantTypeFixed } from './normalise.js';
import { commandTimeoutOf, connectRedis, type RedisConnectionOptions } from './redis-connection.js';
import { redisLoginCounters } from './login-counters.js';
import { redisAuditLogs } from './redis-audit.js';
import { redisRateLeases } from './redis-rate-leases.js';
import { createRedisKeys } from './redis-keys.js';
import { redisLeases } from './redis-revocation-leases.js';
import { redisTopology } from './redis-topology.js';
import { watchSessionEvents } from './redis-session-events.js';
import {
  hashFromReply,
  membershipStateFromReply,
  numberFromField,
  tenantFromHash,
  tenantHashArguments,
  tenantInputHashArguments,
  userFromHash,
  userHashArguments,
} from './redis-records.js';
import { removeOrgTenantRecords, removeUserRecords } from './redis-removals.js';
import { fannedOut, replicatedWrites } from './redis-write-acks.js';
import { CREATED, defineStoreScripts, EMAIL_TAKEN, ID_TAKEN, TYPE_FIXED } from './redis-scripts.js';
import type {
  Membership,
  MembershipState,
  NewUser,
  SessionEvent,
  SessionEventListener,
  Store,
  TenantInput,
  TenantRecord,
  UserRecord,
} from './types.js';

export { redisUrlForDisplay } from './redis-connection.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions extends RedisConnectionOptions {
  /** Start of every key, e.g. `tg:`; must not contain `{` or `}`. */
  keyPrefix: string;
}

/**
 * Connects to Redis and returns the store kept there (layout in
 * `redis-keys.ts`). Fails closed: any Redis failure of a store method rejects
 * with `unavailable` (the original error as `cause`), and the client keeps
 * reconnecting in the background.
 * @throws GatewayError `unavailable` when Redis cannot be reached within
 * `connectTimeoutMs`; the message names the URL without its password.
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const keys = createRedisKeys(options.keyPrefix);
  const redis = defineStoreScripts(await connectRedis(options));
  const topology = redisTopology(redis);
  const replicated = replicatedWrites(topology, options);
  /**
   * This store's own watchers. Each of its session writes is told to them
   * before the write resolves, so the instance that made a change never acts
   * on the old state while its own pub/sub message is still on the wire.
   */
  const watchers = new Set<SessionEventListener>();
  const tellWatchers = (event: SessionEvent): void => {
    for (const watcher of watchers) watcher.onEvent(event);
  };

  async function readUser(userId: string): Promise<UserRecord | null> {
    return userFromHash(await attempt(() => redis.hgetall(keys.user(userId))));
  }

  async function readTenants(tenantIds: string[]): Promise<TenantRecord[]> {
    const hashes = await attempt(() =>
      Promise.all(tenantIds.map((id) => redis.hgetall(keys.tenant(id)))),
    );
    return hashes
      .flatMap((hash) => tenantFromHash(hash) ?? [])
      .sort((a, b) => compareIds(a.tenantId, b.tenantId));
  }

  return {
    async createUser(user: NewUser): Promise<UserRecord> {
      const record: UserRecord = {
        id: user.id,
        email: normaliseEmail(user.email),
        ...(user.name === undefined ? {} : { name: user.name }),
        passwordHash: user.passwordHash,
        sessionVersion: 0,
        personalTenantId: user.personalTenant.tenantId,
        createdAt: user.createdAt,
      };
      const tenantId = record.personalTenantId;
      const userArgs = userHashArguments(record);
      const reply = await attempt(() =>
        redis.createUser(
          keys.user(record.id),
          keys.email(record.email),
          keys.tenant(tenantId),
          keys.userTenants(record.id),
          keys.tenantMembers(tenantId),
          keys.users,
          keys.tenants,
          keys.membership(tenantId, record.id),
          keys.generation,
          record.id,
          tenantId,
          userArgs.length,
          ...userArgs,
          ...tenantHashArguments(user.personalTenant),
        ),
      );
      if (reply === EMAIL_TAKEN) {
        throw new GatewayError('user_exists', 'A user with this e-mail already exists.');
      }
      if (reply === ID_TAKEN) {
        throw new GatewayError('internal_error', 'The user id or tenant id is already in use.');
      }
      if (reply !== CREATED) {
        throw unexpectedReply();
      }
      await replicated(keys.users);
      return record;
    },

    getUser: readUser,

    async findUserByEmail(email: string): Promise<UserRecord | null> {
      const userId = await attempt(() => redis.get(keys.email(normaliseEmail(email))));
      return userId === null ? null : readUser(userId);
    },

    async listUsers(): Promise<UserRecord[]> {
      const ids = await attempt(() => redis.smembers(keys.users));
      const hashes = await attempt(() =>
        Promise.all(ids.map((id) => redis.hgetall(keys.user(id)))),
      );
      return hashes
        .flatMap((hash) => userFromHash(hash) ?? [])
        .sort((a, b) => compareIds(a.id, b.id));
    },

    async setPasswordHash(userId: string, passwordHash: string): Promise<number | null> {
      const reply = await attempt(() =>
        redis.setPasswordHash(keys.user(userId), passwordHash, keys.sessionChannel, userId),
      );
      if (reply === null) return null;
      const sessionVersion = Number(reply);
      tellWatchers({ kind: 'session-ended', userId, sessionVersion });
      await replicated(keys.users);
      await fannedOut(redis, keys.users);
      return sessionVersion;
    },

    async replacePasswordHash(
      userId: string,
      expectedHash: string,
      passwordHash: string,
    ): Promise<boolean> {
      const replaced = await attempt(() =>
        redis.replacePasswordHash(keys.user(userId), expectedHash, passwordHash),
      );
      return replaced === 1;
    },

    async getSessionVersion(userId: string): Promise<number | null> {
      const version = await attempt(() => redis.hget(keys.user(userId), 'sessionVersion'));
      return version === null ? null : numberFromField(version, 'user');
    },

    async removeUser(userId: string): Promise<string[] | null> {
      const removed = await attempt(() => removeUserRecords(redis, keys, userId));
      if (removed === null) return null;
      const { generation } = removed;
      for (const tenantId of removed.ended)
        tellWatchers({ kind: 'membership-removed', userId, tenantId, generation });
      await replicated(keys.users);
      await fannedOut(redis, keys.users);
      return removed.ended;
    },

    async upsertTenant(tenant: TenantInput, now: number): Promise<TenantRecord> {
      const reply = await attempt(() =>
        redis.upsertTenant(
          keys.tenant(tenant.tenantId),
          keys.tenants,
          now,
          tenant.tenantId,
          ...tenantInputHashArguments(tenant),
        ),
      );
      if (reply === TYPE_FIXED) throw tenantTypeFixed();
      const record = tenantFromHash(hashFromReply(reply));
      if (record === null) {
        throw unexpectedReply();
      }
      await replicated(keys.tenants);
      return record;
    },

    async getTenant(tenantId: string): Promise<TenantRecord | null> {
      return tenantFromHash(await attempt(() => redis.hgetall(keys.tenant(tenantId))));
    },

    async listTenants(): Promise<TenantRecord[]> {
      return readTenants(await attempt(() => redis.smembers(keys.tenants)));
    },

    async removeOrgTenant(tenantId: string): Promise<string[] | null> {
      const removed = await attempt(() => removeOrgTenantRecords(redis, keys, tenantId));
      if (removed === null) return null;
      const { generation } = removed;
      for (const userId of removed.ended)
        tellWatchers({ kind: 'membership-removed', userId, tenantId, generation });
      await replicated(keys.users);
      await fannedOut(redis, keys.users);
      return removed.ended;
    },

    async addMember(tenantId: string, userId: string): Promise<boolean> {
      const reply = await attempt(() =>
        redis.addMember(
          keys.user(userId),
          keys.tenant(tenantId),
          keys.userTenants(userId),
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          userId,
          tenantId,
          keys.sessionChannel,
        ),
      );
      const generation = Number(reply);
      if (generation > 0) {
        tellWatchers({ kind: 'membership-added', userId, tenantId, generation });
        await replicated(keys.users);
        await fannedOut(redis, keys.users);
      }
      return generation !== 0;
    },

    async removeMember(tenantId: string, userId: string): Promise<boolean> {
      const reply = await attempt(() =>
        redis.removeMember(
          keys.userTenants(userId),
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          userId,
          tenantId,
          keys.sessionChannel,
        ),
      );
      const generation = Number(reply);
      if (generation === 0) return false;
      tellWatchers({ kind: 'membership-removed', userId, tenantId, generation });
      await replicated(keys.users);
      await fannedOut(redis, keys.users);
      return true;
    },

    async isMember(tenantId: string, userId: string): Promise<boolean> {
      return (await attempt(() => redis.sismember(keys.tenantMembers(tenantId), userId))) === 1;
    },

    async readMembership(tenantId: string, userId: string): Promise<MembershipState> {
      const reply = await attempt(() =>
        redis.readMembership(
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          userId,
        ),
      );
      return membershipStateFromReply(reply);
    },

    async membershipForToken(tenantId: string, userId: string): Promise<Membership | null> {
      const reply = await attempt(() =>
        redis.membershipForToken(
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          userId,
          tenantId,
          keys.sessionChannel,
        ),
      );
      const generation = Number(reply);
      if (!Number.isSafeInteger(generation) || generation < 0) throw unexpectedReply();
      return generation === 0 ? null : { generation };
    },

    async listUserTenants(userId: string): Promise<TenantRecord[]> {
      return readTenants(await attempt(() => redis.smembers(keys.userTenants(userId))));
    },

    async listMembers(tenantId: string): Promise<string[]> {
      const ids = await attempt(() => redis.smembers(keys.tenantMembers(tenantId)));
      return ids.sort(compareIds);
    },

    async revokeToken(jti: string, expiresAt: number): Promise<void> {
      const deadline = revocationDeadlineMs(expiresAt);
      // An expired token is refused anyway: no entry, and none shortened.
      if (Date.now() > deadline) return;
      await attempt(() => redis.revokeToken(keys.revoked(jti), deadline, keys.sessionChannel, jti));
      tellWatchers({ kind: 'token-revoked', jti });
      await replicated(keys.revoked(jti));
      await fannedOut(redis, keys.revoked(jti));
    },

    async isTokenRevoked(jti: string): Promise<boolean> {
      return (await attempt(() => redis.exists(keys.revoked(jti)))) === 1;
    },

    revocationLeases: redisLeases(redis, keys),

    loginCounter: redisLoginCounters(redis, options.keyPrefix),

    // A blocking read must end before the command timeout fails it.
    auditLog: redisAuditLogs(redis, keys, Math.max(50, Math.floor(commandTimeoutOf(options) / 2))),

    watchSessions(listener) {
      watchers.add(listener);
      const unwatch = watchSessionEvents(topology, keys.sessionChannel, listener);
      return () => {
        watchers.delete(listener);
        unwatch();
      };
    },

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

function unexpectedReply(): GatewayError {
  return new GatewayError('internal_error', 'The store gave an unexpected reply.');
}
