/** The Redis store's tenants (see `redis-context.ts`; layout in `redis-keys.ts`). */
import { compareIds, tenantTypeFixed } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { acknowledged, unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { hashFromReply, tenantFromHash, tenantInputHashArguments } from './redis-records.js';
import { removeOrgTenantRecords } from './redis-removals.js';
import { TYPE_FIXED } from './redis-scripts.js';
import type { TenantStore } from './tenants.js';
import type { TenantRecord } from './types.js';

/** The tenants with these ids that exist, sorted by id. */
export async function readTenants(
  { redis, keys }: RedisStoreContext,
  tenantIds: string[],
): Promise<TenantRecord[]> {
  const hashes = await attempt(() =>
    Promise.all(tenantIds.map((id) => redis.hgetall(keys.tenant(id)))),
  );
  return hashes
    .flatMap((hash) => tenantFromHash(hash) ?? [])
    .sort((a, b) => compareIds(a.tenantId, b.tenantId));
}

export function redisTenants(context: RedisStoreContext): TenantStore {
  const { redis, keys } = context;
  return {
    upsertTenant: async (tenant, now) => {
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
      await context.replicated(keys.tenants);
      return record;
    },
    getTenant: async (tenantId) =>
      tenantFromHash(await attempt(() => redis.hgetall(keys.tenant(tenantId)))),
    listTenants: async () =>
      readTenants(context, await attempt(() => redis.smembers(keys.tenants))),
    removeOrgTenant: async (tenantId) => {
      const removed = await attempt(() => removeOrgTenantRecords(redis, keys, tenantId));
      if (removed === null) return null;
      const { generation } = removed;
      for (const userId of removed.ended)
        context.tellWatchers({ kind: 'membership-removed', userId, tenantId, generation });
      for (const clientId of removed.clients ?? [])
        context.tellWatchers({ kind: 'client-changed', clientId });
      await acknowledged(context, keys.users);
      return removed.ended;
    },
  };
}
