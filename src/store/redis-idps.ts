/**
 * The Redis store's tenant identity providers (see `idps.ts`; layout in
 * `redis-keys.ts`, scripts in `redis-idp-scripts.ts`). A write is answered
 * once a replica has it.
 */
import type { IdpStore } from './idps.js';
import { idpClientKey, issuerInUse, normaliseDomains } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { ISSUER_IN_USE } from './redis-idp-scripts.js';
import { idpFromHash, idpHashArguments } from './redis-records.js';

export function redisIdps(context: RedisStoreContext): IdpStore {
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
