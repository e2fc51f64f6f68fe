/**
 * The Lua scripts of tenant identity providers (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`, same conventions: every check
 * before the first write, every key in KEYS under `{dir}`). A record and its
 * entry in the issuer + client id index (`idpClientKey`: the issuer, a space,
 * the client id) are written together, so the index never names a tenant
 * whose record has another pair.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

/** The reply of `setTenantIdp` when another tenant's record has the issuer and client id. */
export const ISSUER_IN_USE = -1;

export const IDP_SCRIPTS = {
  /**
   * KEYS: tenant, idp, idp-clients. ARGV: tenantId, the record's issuer +
   * client id key, then the record's hash arguments (field, value, …).
   * Returns 0 when there is no org tenant, ${ISSUER_IN_USE} when another
   * tenant holds the pair, else 1: the record replaced whole (a field it no
   * longer has, such as a secret, is gone) and the index moved to its pair.
   */
  setTenantIdp: {
    numberOfKeys: 3,
    lua: `
if redis.call('HGET', KEYS[1], 'type') ~= 'orgtenant' then return 0 end
local holder = redis.call('HGET', KEYS[3], ARGV[2])
if holder and holder ~= ARGV[1] then return ${ISSUER_IN_USE} end
local issuer, clientId = unpack(redis.call('HMGET', KEYS[2], 'issuer', 'clientId'))
if issuer and clientId then
  local previous = issuer .. ' ' .. clientId
  if previous ~= ARGV[2] and redis.call('HGET', KEYS[3], previous) == ARGV[1] then
    redis.call('HDEL', KEYS[3], previous)
  end
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
return 1
`,
  },

  /**
   * KEYS: idp, idp-clients. ARGV: tenantId.
   * Returns 0 when the tenant has no record, else 1 (record and its pair's entry gone).
   */
  removeTenantIdp: {
    numberOfKeys: 2,
    lua: `
local issuer, clientId = unpack(redis.call('HMGET', KEYS[1], 'issuer', 'clientId'))
if not issuer then return 0 end
local pair = issuer .. ' ' .. (clientId or '')
if redis.call('HGET', KEYS[2], pair) == ARGV[1] then redis.call('HDEL', KEYS[2], pair) end
redis.call('DEL', KEYS[1])
return 1
`,
  },
  /**
   * The index's upgrade (`redis-idp-index.ts`), without `numberOfKeys`: the
   * key count comes first. KEYS: idp-clients, idp-issuers (the index of
   * versions before issue 42), then IdP records. ARGV: the records' tenant
   * ids, in the same order. Each record with an issuer and a client id gets
   * its pair's entry unless the index has one (HSETNX); idp-issuers is
   * deleted. Returns how many entries were added.
   */
  indexIdpClients: {
    lua: `
local added = 0
for i = 3, #KEYS do
  local issuer, clientId = unpack(redis.call('HMGET', KEYS[i], 'issuer', 'clientId'))
  if issuer and clientId then
    added = added + redis.call('HSETNX', KEYS[1], issuer .. ' ' .. clientId, ARGV[i - 2])
  end
end
redis.call('DEL', KEYS[2])
return added
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
