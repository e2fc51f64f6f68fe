/** The Redis store's memberships and their roles (see `redis-context.ts`; layout in `redis-keys.ts`). */
import { compareIds } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { acknowledged, unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { membershipStateFromReply } from './redis-records.js';
import { LAST_ADMIN_REFUSED } from './redis-scripts.js';
import { readTenants } from './redis-tenants.js';
import { LAST_ADMIN, type MembershipStore } from './memberships.js';
import type { MemberChangeOptions, MemberEntry, MemberRole } from './memberships.js';

export function redisMemberships(context: RedisStoreContext): MembershipStore {
  const { redis, keys } = context;
  return {
    ...membershipChanges(context),
    isMember: async (tenantId, userId) =>
      (await attempt(() => redis.sismember(keys.tenantMembers(tenantId), userId))) === 1,
    readMembership: async (tenantId, userId) => {
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
    membershipForToken: async (tenantId, userId) => {
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
    listUserTenants: async (userId) =>
      readTenants(context, await attempt(() => redis.smembers(keys.userTenants(userId)))),
    listMembers: async (tenantId) => {
      const ids = await attempt(() => redis.smembers(keys.tenantMembers(tenantId)));
      return ids.sort(compareIds);
    },
    listMemberships: async (tenantId) => {
      const ids = (await attempt(() => redis.smembers(keys.tenantMembers(tenantId)))).sort(
        compareIds,
      );
      const entries = await Promise.all(ids.map((id) => readMemberEntry(context, tenantId, id)));
      return entries.filter((entry) => entry !== null);
    },
    getMemberRole: async (tenantId, userId) =>
      (await readMemberEntry(context, tenantId, userId))?.role ?? null,
  };
}

/** One member's role and start; null when they left meanwhile. */
async function readMemberEntry(
  context: RedisStoreContext,
  tenantId: string,
  userId: string,
): Promise<MemberEntry | null> {
  const { redis, keys } = context;
  const reply = await attempt(() =>
    redis.readMemberEntry(
      keys.tenantMembers(tenantId),
      keys.membership(tenantId, userId),
      keys.user(userId),
      keys.tenant(tenantId),
      userId,
    ),
  );
  if (reply === null) return null;
  const [role, joined] = reply as [unknown, unknown];
  if (role !== 'admin' && role !== 'member') throw unexpectedReply();
  const joinedAt = joined === null || joined === undefined ? null : Number(joined);
  if (joinedAt !== null && !Number.isSafeInteger(joinedAt)) throw unexpectedReply();
  return { userId, role, joinedAt };
}

/** The writes: each publishes its membership event in the script that makes it. */
function membershipChanges(
  context: RedisStoreContext,
): Pick<MembershipStore, 'addMember' | 'removeMember' | 'setMemberRole'> {
  const { redis, keys } = context;
  const announced = async (
    kind: 'membership-added' | 'membership-removed',
    userId: string,
    tenantId: string,
    generation: number,
  ) => {
    context.tellWatchers({ kind, userId, tenantId, generation });
    await acknowledged(context, keys.users);
  };
  return {
    async addMember(tenantId, userId, role?: MemberRole) {
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
          role ?? '',
          Math.floor(Date.now() / 1000),
        ),
      );
      const generation = Number(reply);
      if (generation > 0) await announced('membership-added', userId, tenantId, generation);
      return generation !== 0;
    },
    async removeMember(tenantId, userId, options) {
      const reply = await attempt(() =>
        redis.removeMember(
          keys.userTenants(userId),
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          keys.tenant(tenantId),
          userId,
          tenantId,
          keys.sessionChannel,
          ...guardPrefixes(context, tenantId, options),
        ),
      );
      const generation = Number(reply);
      if (generation === LAST_ADMIN_REFUSED) return LAST_ADMIN;
      if (generation === 0) return false;
      await announced('membership-removed', userId, tenantId, generation);
      return true;
    },
    async setMemberRole(tenantId, userId, role, options) {
      const reply = await attempt(() =>
        redis.setMemberRole(
          keys.tenantMembers(tenantId),
          keys.membership(tenantId, userId),
          keys.generation,
          keys.user(userId),
          keys.tenant(tenantId),
          userId,
          tenantId,
          role,
          keys.sessionChannel,
          ...guardPrefixes(context, tenantId, options),
        ),
      );
      const generation = Number(reply);
      if (generation === LAST_ADMIN_REFUSED) return LAST_ADMIN;
      if (generation === 0) return null;
      if (generation < 0) return false;
      // A new generation for the pair: tokens issued under the old role end, as on removal.
      await announced('membership-added', userId, tenantId, generation);
      return true;
    },
  };
}

/**
 * The last-admin guard's arguments (`refuseLastAdmin` in `redis-scripts.ts`):
 * the key prefixes of the tenant's memberships and of users, to which the
 * script appends each member's id; empty when the guard is off.
 */
function guardPrefixes(
  { keys }: RedisStoreContext,
  tenantId: string,
  options: MemberChangeOptions | undefined,
): [string, string] {
  if (options?.keepAnAdmin !== true) return ['', ''];
  return [keys.membership(tenantId, ''), keys.user('')];
}
