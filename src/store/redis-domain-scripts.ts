/**
 * The Lua scripts of tenant domains (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`, same conventions: every check
 * before the first write, every key in KEYS under `{dir}`). A tenant's
 * domains are a hash (domain → its record as JSON); the verified-domains
 * index (domain → tenant) is written in the same step as the record, so a
 * verified domain has one holder whatever instances race.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

/** The reply when another tenant has verified the domain. */
export const DOMAIN_TAKEN = -1;
/** The reply of `addTenantDomain` when the tenant holds the most domains already. */
export const TOO_MANY_DOMAINS = -2;

export const DOMAIN_SCRIPTS = {
  /**
   * KEYS: tenant, tenant-domains, verified-domains. ARGV: tenantId, domain,
   * the record as JSON, 1 when it is verified, the most domains a tenant holds.
   * Returns 0 when there is no org tenant; the stored record (JSON) when the
   * tenant has the domain already; ${DOMAIN_TAKEN} or ${TOO_MANY_DOMAINS}; else
   * the record written.
   */
  addTenantDomain: {
    numberOfKeys: 3,
    lua: `
if redis.call('HGET', KEYS[1], 'type') ~= 'orgtenant' then return 0 end
local existing = redis.call('HGET', KEYS[2], ARGV[2])
if existing then return existing end
local holder = redis.call('HGET', KEYS[3], ARGV[2])
if holder and holder ~= ARGV[1] then return ${DOMAIN_TAKEN} end
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[5]) then return ${TOO_MANY_DOMAINS} end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if ARGV[4] == '1' then redis.call('HSET', KEYS[3], ARGV[2], ARGV[1]) end
return ARGV[3]
`,
  },

  /**
   * KEYS: tenant-domains, verified-domains. ARGV: tenantId, domain, now.
   * Returns 0 when the tenant has no such domain, ${DOMAIN_TAKEN}, else the
   * record (JSON) with its \`verifiedAt\` (kept when it had one).
   */
  verifyTenantDomain: {
    numberOfKeys: 2,
    lua: `
local stored = redis.call('HGET', KEYS[1], ARGV[2])
if not stored then return 0 end
local holder = redis.call('HGET', KEYS[2], ARGV[2])
if holder and holder ~= ARGV[1] then return ${DOMAIN_TAKEN} end
local record = cjson.decode(stored)
if record.verifiedAt == nil then record.verifiedAt = tonumber(ARGV[3]) end
stored = cjson.encode(record)
redis.call('HSET', KEYS[1], ARGV[2], stored)
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return stored
`,
  },

  /**
   * KEYS: tenant-domains, verified-domains. ARGV: tenantId, domain.
   * Returns 1 when the domain (and its verification) went, 0 when the tenant had none.
   */
  removeTenantDomain: {
    numberOfKeys: 2,
    lua: `
if redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then return 0 end
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[2]) end
return 1
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
