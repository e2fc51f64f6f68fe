/**
 * The Lua scripts of machine clients and their API keys (registered with the
 * others by `defineStoreScripts` in `redis-scripts.ts`, same conventions:
 * every check before the first write, every key in KEYS under `{dir}`).
 * Every change takes the next generation from the directory's counter.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

/** The reply of a create when the id is in use. */
export const CLIENT_ID_TAKEN = -1;
/** The reply of `removeClient` when its keys changed since the caller read them. */
export const CLIENT_STALE = -2;

export const CLIENT_SCRIPTS = {
  /**
   * KEYS: tenant, client, tenant-clients, generation. ARGV: clientId, then
   * the client's hash arguments (field, value, …) but its generation.
   * Returns 0 when there is no org tenant, ${CLIENT_ID_TAKEN} when the id is in
   * use, else the client's generation.
   */
  createClient: {
    numberOfKeys: 4,
    lua: `
if redis.call('HGET', KEYS[1], 'type') ~= 'orgtenant' then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return ${CLIENT_ID_TAKEN} end
local generation = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], 'generation', generation, unpack(ARGV, 2))
redis.call('SADD', KEYS[3], ARGV[1])
return generation
`,
  },

  /**
   * KEYS: client, generation. ARGV: secret digest, now, session channel, clientId.
   * Returns the client's hash after the change, or an empty list when there is none.
   */
  rotateClientSecret: {
    numberOfKeys: 2,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local generation = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'secretDigest', ARGV[1], 'rotatedAt', ARGV[2], 'generation', generation)
redis.call('PUBLISH', ARGV[3], cjson.encode({ kind = 'client-changed', clientId = ARGV[4] }))
return redis.call('HGETALL', KEYS[1])
`,
  },

  /**
   * KEYS: client, client-keys, tenant-clients, generation, then the hash of
   * each key in ARGV. ARGV: clientId, tenantId, session channel, then the
   * client's key ids as the caller read them.
   * Returns 0 when there is no such client of the tenant, ${CLIENT_STALE} when
   * its keys are no longer those read (read again), else the generation the
   * removal took.
   */
  removeClient: {
    lua: `
if redis.call('HGET', KEYS[1], 'tenantId') ~= ARGV[2] then return 0 end
local n = #ARGV - 3
if redis.call('SCARD', KEYS[2]) ~= n then return ${CLIENT_STALE} end
for i = 4, #ARGV do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then return ${CLIENT_STALE} end
end
local generation = redis.call('INCR', KEYS[4])
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('PUBLISH', ARGV[3], cjson.encode({ kind = 'client-changed', clientId = ARGV[1] }))
return generation
`,
  },

  /**
   * KEYS: client, api-key, client-keys, generation. ARGV: keyId, then the
   * key's hash arguments but its tenant and generation.
   * Returns { 0 } when there is no client, { ${CLIENT_ID_TAKEN} } when the key id
   * is in use, else { generation, tenantId }.
   */
  createApiKey: {
    numberOfKeys: 4,
    lua: `
local tenantId = redis.call('HGET', KEYS[1], 'tenantId')
if not tenantId then return { 0 } end
if redis.call('EXISTS', KEYS[2]) == 1 then return { ${CLIENT_ID_TAKEN} } end
local generation = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], 'tenantId', tenantId, 'generation', generation, unpack(ARGV, 2))
redis.call('SADD', KEYS[3], ARGV[1])
return { generation, tenantId }
`,
  },

  /**
   * KEYS: client-keys, api-key, generation. ARGV: keyId, session channel, clientId.
   * Returns 0 when the client has no such key, else the generation the removal
   * took; publishes `client-changed`, so every instance forgets what it knew
   * of the client's keys.
   */
  removeApiKey: {
    numberOfKeys: 3,
    lua: `
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
local generation = redis.call('INCR', KEYS[3])
redis.call('PUBLISH', ARGV[2], cjson.encode({ kind = 'client-changed', clientId = ARGV[3] }))
return generation
`,
  },

  /**
   * KEYS: api-key. ARGV: Unix seconds.
   * Moves `lastUsedAt` forward to the time given; never creates a key.
   */
  touchApiKey: {
    numberOfKeys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
if last and tonumber(last) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
return 1
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
