/** The Redis store's users (see `redis-context.ts`; layout in `redis-keys.ts`). */
import { GatewayError } from '../errors.js';
import { compareIds, normaliseEmail } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { acknowledged, unexpectedReply, type RedisStoreContext } from './redis-context.js';
import {
  numberFromField,
  tenantHashArguments,
  userFromHash,
  userHashArguments,
} from './redis-records.js';
import { removeUserRecords } from './redis-removals.js';
import { CREATED, EMAIL_TAKEN, ID_TAKEN } from './redis-scripts.js';
import type { UserStore } from './users.js';
import type { NewUser, UserRecord } from './types.js';

export function redisUsers(context: RedisStoreContext): UserStore {
  const { redis, keys } = context;
  const readUser = async (userId: string) =>
    userFromHash(await attempt(() => redis.hgetall(keys.user(userId))));
  return {
    createUser: (user) => createUser(context, user),
    getUser: readUser,
    findUserByEmail: async (email) => {
      const userId = await attempt(() => redis.get(keys.email(normaliseEmail(email))));
      return userId === null ? null : readUser(userId);
    },
    listUsers: async () => {
      const ids = await attempt(() => redis.smembers(keys.users));
      const hashes = await attempt(() =>
        Promise.all(ids.map((id) => redis.hgetall(keys.user(id)))),
      );
      return hashes
        .flatMap((hash) => userFromHash(hash) ?? [])
        .sort((a, b) => compareIds(a.id, b.id));
    },
    setPasswordHash: async (userId, passwordHash, ifVersion) => {
      const reply = await attempt(() =>
        redis.setPasswordHash(
          keys.user(userId),
          passwordHash,
          keys.sessionChannel,
          userId,
          ifVersion === undefined ? '' : String(ifVersion),
        ),
      );
      if (reply === null) return null;
      const sessionVersion = Number(reply);
      context.tellWatchers({ kind: 'session-ended', userId, sessionVersion });
      await acknowledged(context, keys.users);
      return sessionVersion;
    },
    replacePasswordHash: async (userId, expectedHash, passwordHash) => {
      const replaced = await attempt(() =>
        redis.replacePasswordHash(keys.user(userId), expectedHash, passwordHash),
      );
      return replaced === 1;
    },
    markEmailVerified: async (userId, at) => {
      const marked = await attempt(() => redis.markEmailVerified(keys.user(userId), String(at)));
      if (marked !== 1) return false;
      await context.replicated(keys.users);
      return true;
    },
    getSessionVersion: async (userId) => {
      const version = await attempt(() => redis.hget(keys.user(userId), 'sessionVersion'));
      return version === null ? null : numberFromField(version, 'user');
    },
    removeUser: async (userId) => {
      const removed = await attempt(() => removeUserRecords(redis, keys, userId));
      if (removed === null) return null;
      const { generation } = removed;
      // The user's TOTP record goes after them (a user id is never reused: none can open it).
      await attempt(() => redis.del(keys.totp(userId)));
      for (const tenantId of removed.ended)
        context.tellWatchers({ kind: 'membership-removed', userId, tenantId, generation });
      await acknowledged(context, keys.users);
      return removed.ended;
    },
  };
}

async function createUser(context: RedisStoreContext, user: NewUser): Promise<UserRecord> {
  const { redis, keys } = context;
  const record: UserRecord = {
    id: user.id,
    email: normaliseEmail(user.email),
    ...(user.name === undefined ? {} : { name: user.name }),
    passwordHash: user.passwordHash,
    sessionVersion: 0,
    personalTenantId: user.personalTenant.tenantId,
    createdAt: user.createdAt,
    ...(user.createdByIdp === undefined ? {} : { createdByIdp: { ...user.createdByIdp } }),
    ...(user.emailVerifiedAt === undefined ? {} : { emailVerifiedAt: user.emailVerifiedAt }),
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
  await context.replicated(keys.users);
  return record;
}
