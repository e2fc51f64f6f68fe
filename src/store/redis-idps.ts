/**
 * The Redis store's tenant identity providers (see `idp-types.ts`; layout in
 * `redis-keys.ts`, scripts in `redis-idp-scripts.ts`). A write is answered
 * once a replica has it.
 */
import type { SsoRecords, TenantIdps } from './idp-types.js';
import { idpClientKey, issuerInUse, normaliseDomains } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { ISSUER_IN_USE } from './redis-idp-scripts.js';
import { idpFromHash, idpHashArguments } from './redis-records.js';

export function redisIdps(context: RedisStoreContext): TenantIdps {
  const { redis, keys } = context;
  return {
    setTenantIdp: async (input) => {
      const idp = { ...input, domains: normaliseDomains(input.domains) };
      const reply = await attempt(() =>
        redis.setTenantIdp(
          keys.tenant(idp.tenantId),
          keys.idp(idp.tenantId),
          keys.idpClients,
          idp.tenantId,
          idpClientKey(idp.issuer, idp.clientId),
          ...idpHashArguments(idp),
        ),
      );
      if (reply === ISSUER_IN_USE) throw issuerInUse();
      if (reply !== 0 && reply !== 1) throw unexpectedReply();
      if (reply === 0) return false;
      await context.replicated(keys.idp(idp.tenantId));
      return true;
    },
    getTenantIdp: async (tenantId) =>
      idpFromHash(await attempt(() => redis.hgetall(keys.idp(tenantId)))),
    removeTenantIdp: async (tenantId) => {
      const reply = await attempt(() =>
        redis.removeTenantIdp(keys.idp(tenantId), keys.idpClients, tenantId),
      );
      if (reply !== 1) return false;
      await context.replicated(keys.idp(tenantId));
      return true;
    },
    tenantIdByClient: async (issuer, clientId) =>
      attempt(() => redis.hget(keys.idpClients, idpClientKey(issuer, clientId))),
  };
}

/** One-time records: a key with a TTL, taken by GETDEL (one taker wins). */
export function redisSsoRecords(context: RedisStoreContext): SsoRecords {
  const { redis, keys } = context;
  return {
    putSsoRecord: async (kind, key, value, ttlSeconds) => {
      const name = keys.ssoRecord(kind, key);
      await attempt(() => redis.set(name, value, 'EX', ttlSeconds));
      // The callback may reach another instance, reading after a failover.
      await context.replicated(name);
    },
    takeSsoRecord: async (kind, key) => attempt(() => redis.getdel(keys.ssoRecord(kind, key))),
  };
}
