/**
 * The Lua scripts of refresh-token families (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`). Each touches one key, so it
 * runs in one slot of a cluster whatever the key's tag. A family is one JSON
 * string (`StoredRefreshFamily`, decoded and encoded with cjson, which writes
 * an empty list as `{}`); its fields and the rules here are those of
 * `refresh-rotation.ts`, which the memory store applies.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

/** The reply of `revokeRefreshFamily` by what it found. */
export const REVOKE_REPLY = {
  none: 'none',
  otherTenant: 'other',
  already: 'already',
  revoked: 'revoked',
} as const;

export const REFRESH_SCRIPTS = {
  /**
   * KEYS: the user's index. ARGV: the new family's index entry
   * (`familyId@tenantId`), its absolute end, its creation (now),
   * maxPerTenant, the record margin (seconds), `@tenantId`.
   * Drops the families ended by now, enters the new one, and keeps the
   * index as long as its last family. Returns the entries of the families of
   * the same tenant that end soonest past `maxPerTenant - 1` others (never
   * the new one, never another tenant's), left in the index: the caller takes
   * each out once it has ended it, so one it failed to end is still counted,
   * and ended by the next login. An entry without a tenant (a family id
   * alone, written before issue 42) counts for no tenant.
   */
  indexRefreshFamily: {
    numberOfKeys: 1,
    lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local suffix = ARGV[6]
local mine = {}
for _, entry in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if #entry > #suffix and string.sub(entry, -#suffix) == suffix then table.insert(mine, entry) end
end
local out = {}
for i = 1, #mine - (tonumber(ARGV[4]) - 1) do out[i] = mine[i] end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], tonumber(last[2]) + tonumber(ARGV[5]))
return out
`,
  },

  /**
   * KEYS: the family. ARGV: presented digest, successor digest, jti, its
   * exp, now, grace seconds, idle TTL seconds, the record margin, how many
   * used digests to keep.
   * Returns { outcome } when invalid (writing nothing: a digest the family
   * never had among them), else { outcome, family JSON } after pruning, then
   * rotating, adding the jti, or revoking (the previous digest past the
   * grace, or one of the used ones); the record then lives until its end or
   * its last access token's, plus the margin. A record written without a
   * `used` list has used nothing yet.
   */
  rotateRefreshToken: {
    numberOfKeys: 1,
    lua: `
local raw = redis.call('GET', KEYS[1])
if not raw then return { 'invalid' } end
local f = cjson.decode(raw)
local presented, now = ARGV[1], tonumber(ARGV[5])
if f.revoked or now >= f.absoluteExpiresAt then return { 'invalid' } end
local idle = now >= f.currentExpiresAt
local used = f.used or {}
local outcome
if presented == f.currentDigest then
  if idle then return { 'invalid' } end
  outcome = 'rotated'
elseif f.previous and presented == f.previous.digest then
  if now - f.previous.usedAt > tonumber(ARGV[6]) then outcome = 'reused'
  elseif idle then return { 'invalid' }
  else outcome = 'grace' end
else
  for _, digest in ipairs(used) do
    if digest == presented then outcome = 'reused' end
  end
  if not outcome then return { 'invalid' } end
end
local tokens = {}
for jti, exp in pairs(f.accessTokens) do
  if exp >= now then tokens[jti] = exp end
end
f.accessTokens = tokens
if outcome == 'reused' then
  f.revoked = true
else
  if outcome == 'rotated' then
    if f.previous then
      table.insert(used, f.previous.digest)
      while #used > tonumber(ARGV[9]) do table.remove(used, 1) end
    end
    f.used = used
    f.previous = { digest = presented, usedAt = now, successorDigest = ARGV[2] }
    f.currentDigest = ARGV[2]
    f.currentExpiresAt = math.min(now + tonumber(ARGV[7]), f.absoluteExpiresAt)
  end
  tokens[ARGV[3]] = tonumber(ARGV[4])
end
local last = f.absoluteExpiresAt
for _, exp in pairs(tokens) do
  if exp > last then last = exp end
end
local encoded = cjson.encode(f)
redis.call('SET', KEYS[1], encoded, 'EXAT', last + tonumber(ARGV[8]))
return { outcome, encoded }
`,
  },

  /**
   * KEYS: the family. ARGV: a tenant id, or '' for any.
   * Returns { '${REVOKE_REPLY.none}' } when there is no such family,
   * { '${REVOKE_REPLY.otherTenant}' } when it is another tenant's, else
   * { '${REVOKE_REPLY.already}' or '${REVOKE_REPLY.revoked}', family JSON }
   * with the family revoked (its expiry kept).
   */
  revokeRefreshFamily: {
    numberOfKeys: 1,
    lua: `
local raw = redis.call('GET', KEYS[1])
if not raw then return { '${REVOKE_REPLY.none}' } end
local f = cjson.decode(raw)
if ARGV[1] ~= '' and f.tenantId ~= ARGV[1] then return { '${REVOKE_REPLY.otherTenant}' } end
if f.revoked then return { '${REVOKE_REPLY.already}', raw } end
f.revoked = true
local encoded = cjson.encode(f)
redis.call('SET', KEYS[1], encoded, 'KEEPTTL')
return { '${REVOKE_REPLY.revoked}', encoded }
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
