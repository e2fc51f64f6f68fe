/**
 * The Redis store's invitations (see `invitations.ts`; layout in
 * `redis-keys.ts`): each record a JSON string under its token's digest,
 * expiring with the invitation and taken by GETDEL (of concurrent takers one
 * gets it); the tenant's index (id → digest) is swept of gone records when
 * listed.
 */
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import type { InvitationRecord, InvitationStore } from './invitations.js';

export function redisInvitations(context: RedisStoreContext): InvitationStore {
  const { redis, keys } = context;
  const live = (json: string | null, now: number): InvitationRecord | null => {
    if (json === null) return null;
    const record = parse(json);
    return record.expiresAt <= now ? null : record;
  };
  const unindex = (tenantId: string, id: string) =>
    attempt(() => redis.hdel(keys.tenantInvitations(tenantId), id));
  return {
    async addInvitation(record, maxPending) {
      const index = keys.tenantInvitations(record.tenantId);
      if ((await attempt(() => redis.hlen(index))) >= maxPending) return false;
      const name = keys.invitation(record.tokenDigest);
      await attempt(() => redis.set(name, JSON.stringify(record), 'EXAT', record.expiresAt));
      await attempt(() => redis.hset(index, record.id, record.tokenDigest));
      // The invitee's click may reach another instance, reading after a failover.
      await context.replicated(name);
      return true;
    },
    async listInvitations(tenantId, now) {
      const index = await attempt(() => redis.hgetall(keys.tenantInvitations(tenantId)));
      const found = await Promise.all(
        Object.entries(index).map(async ([id, digest]) => {
          const record = live(await attempt(() => redis.get(keys.invitation(digest))), now);
          if (record === null) await unindex(tenantId, id);
          return record;
        }),
      );
      return found
        .filter((r) => r !== null)
        .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    },
    findInvitation: async (digest, now) =>
      live(await attempt(() => redis.get(keys.invitation(digest))), now),
    async takeInvitation(digest, now) {
      const json = await attempt(() => redis.getdel(keys.invitation(digest)));
      if (json === null) return null;
      const record = parse(json);
      await unindex(record.tenantId, record.id);
      return record.expiresAt <= now ? null : record;
    },
    async removeInvitation(tenantId, id) {
      const digest = await attempt(() => redis.hget(keys.tenantInvitations(tenantId), id));
      if (digest === null) return null;
      const json = await attempt(() => redis.getdel(keys.invitation(digest)));
      await unindex(tenantId, id);
      return json === null ? null : parse(json);
    },
  };
}

function parse(json: string): InvitationRecord {
  const record = JSON.parse(json) as Partial<InvitationRecord>;
  if (typeof record.id !== 'string' || typeof record.expiresAt !== 'number') {
    throw unexpectedReply();
  }
  return record as InvitationRecord;
}
