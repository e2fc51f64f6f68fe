/**
 * The store's multi-step writes as Lua scripts, registered with ioredis
 * `defineCommand` (sent by EVALSHA, loaded on first use). Redis runs a script
 * without interleaving any other command, which makes each one atomic: every
 * check comes before the first write, so a refused call writes nothing. Redis
 * also refuses a script for lack of memory only at its first write, never
 * halfway through.
 *
 * Every key a script touches is passed in KEYS and lives under the `{dir}` tag
 * (see `redis-keys.ts`), as Redis Cluster requires — but for the
 * refresh-family and browser-session scripts (`redis-refresh-scripts.ts`,
 * `redis-browser-session-scripts.ts`), which touch one key each, and for the
 * other members' keys the last-admin guard reads ({@link refuseLastAdmin}):
 * built in Lua from key prefixes passed in ARGV, under `{dir}` too, so in the
 * slot of the script's KEYS (which Cluster allows). Hash field names here match `redis-records.ts`.
 */
import type { Redis } from 'ioredis';
import { CLIENT_SCRIPTS } from './redis-client-scripts.js';
import { REFRESH_SCRIPTS } from './redis-refresh-scripts.js';
import { IDP_SCRIPTS } from './redis-idp-scripts.js';
import { DOMAIN_SCRIPTS } from './redis-domain-scripts.js';
import { PASSKEY_SCRIPTS } from './redis-passkey-scripts.js';
import { BROWSER_SESSION_SCRIPTS } from './redis-browser-session-scripts.js';
import { TOTP_SCRIPTS } from './redis-totp-scripts.js';
import type { ScriptDefinition } from './redis-script-definition.js';

/** The reply of `createUser` when the e-mail is already registered. */
export const EMAIL_TAKEN = 'email_taken';
/** The reply of `createUser` when the user id or the tenant id is in use. */
export const ID_TAKEN = 'id_taken';
/** The reply of `createUser` on success. */
export const CREATED = 'created';
/** The reply of `upsertTenant` when the tenant exists with another type. */
export const TYPE_FIXED = 'type_fixed';
/**
 * The reply of a removal when what it was to remove changed since the caller
 * read it (a membership added meanwhile): the caller reads again and retries.
 */
export const REMOVAL_STALE = -1;

/** The reply of `removeMember` and `setMemberRole` when their last-admin guard refused the change. */
export const LAST_ADMIN_REFUSED = -2;

/**
 * Lua statements: the script returns {@link LAST_ADMIN_REFUSED} when the guard is on
 * (`membershipPrefix` not empty) and the member `userId` is the tenant's only
 * admin — before any write. Every member of the set at `members` counts, its
 * role read as `readMemberEntry` reads it (a membership stored before roles
 * by {@link creatorRole}). The arguments are Lua expressions;
 * `membershipPrefix` and `userPrefix` are `keys.membership(tenantId, '')`
 * and `keys.user('')`, to which a user id is appended.
 */
function refuseLastAdmin(
  members: string,
  userId: string,
  membershipPrefix: string,
  userPrefix: string,
  tenantKey: string,
): string {
  const roleOf = (id: string) =>
    `(redis.call('HGET', ${membershipPrefix} .. ${id}, 'role') or ${creatorRole(`${userPrefix} .. ${id}`, tenantKey)})`;
  return `
if ${membershipPrefix} ~= '' and redis.call('SISMEMBER', ${members}, ${userId}) == 1
  and ${roleOf(userId)} == 'admin' then
  local another = false
  for _, other in ipairs(redis.call('SMEMBERS', ${members})) do
    if other ~= ${userId} and ${roleOf('other')} == 'admin' then another = true break end
  end
  if not another then return ${LAST_ADMIN_REFUSED} end
end`;
}

/**
 * A Lua expression: the role of a membership stored without one (before
 * roles), or the default of a new one — `admin` when the user (hash at
 * `userKey`) created the tenant (hash at `tenantKey`), else `member`.
 */
export function creatorRole(userKey: string, tenantKey: string): string {
  return `(function()
  local email = redis.call('HGET', ${userKey}, 'email')
  local creator = redis.call('HGET', ${tenantKey}, 'createdBy')
  if email and creator and email == string.lower(string.match(creator, '^%s*(.-)%s*$')) then return 'admin' end
  return 'member'
end)()`;
}

export const STORE_SCRIPTS = {
  /**
   * KEYS: user, email, tenant, user-tenants, tenant-members, users, tenants,
   * personal membership, generation.
   * ARGV: userId, tenantId, n, then n user hash arguments (field, value, …),
   * then the tenant hash arguments.
   */
  createUser: {
    numberOfKeys: 9,
    lua: `
if redis.call('EXISTS', KEYS[2]) == 1 then return '${EMAIL_TAKEN}' end
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return '${ID_TAKEN}'
end
local userId, tenantId, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + n))
redis.call('SET', KEYS[2], userId)
redis.call('HSET', KEYS[3], unpack(ARGV, 4 + n))
redis.call('SADD', KEYS[4], tenantId)
redis.call('SADD', KEYS[5], userId)
redis.call('SADD', KEYS[6], userId)
redis.call('SADD', KEYS[7], tenantId)
redis.call('HSET', KEYS[8], 'generation', redis.call('INCR', KEYS[9]), 'role', 'admin')
return '${CREATED}'
`,
  },

  /**
   * KEYS: user. ARGV: new hash, session channel, user id, the session
   * version it must still be ('' for any).
   * Returns the new session version, or nil when the user does not exist (an
   * HSET alone would create a stray hash for it) or has another version.
   * Publishes `session-ended` in the same step, so no instance can miss a
   * password change that happened.
   */
  setPasswordHash: {
    numberOfKeys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if ARGV[4] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'sessionVersion') or '0') ~= tonumber(ARGV[4]) then return false end
redis.call('HSET', KEYS[1], 'passwordHash', ARGV[1])
local version = redis.call('HINCRBY', KEYS[1], 'sessionVersion', 1)
redis.call('PUBLISH', ARGV[2], cjson.encode({ kind = 'session-ended', userId = ARGV[3], sessionVersion = version }))
return version
`,
  },

  /**
   * KEYS: revoked. ARGV: deadline (Unix ms), session channel, jti.
   * Deny-lists the token until its deadline and tells every instance, in one
   * step: no instance can miss a revocation that happened.
   */
  revokeToken: {
    numberOfKeys: 1,
    lua: `
redis.call('SET', KEYS[1], '1', 'PXAT', ARGV[1])
redis.call('PUBLISH', ARGV[2], cjson.encode({ kind = 'token-revoked', jti = ARGV[3] }))
return 1
`,
  },

  /**
   * KEYS: user. ARGV: expected hash, new hash.
   * Compare-and-set: a concurrent password change wins over a rehash. Returns
   * 1 when replaced, 0 otherwise (a missing user's HGET is false, never equal).
   */
  replacePasswordHash: {
    numberOfKeys: 1,
    lua: `
if redis.call('HGET', KEYS[1], 'passwordHash') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'passwordHash', ARGV[2])
return 1
`,
  },

  /**
   * KEYS: user. ARGV: verifiedAt. Sets \`emailVerifiedAt\` unless set; 0 when
   * the user does not exist.
   */
  markEmailVerified: {
    numberOfKeys: 1,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'emailVerifiedAt', ARGV[1])
return 1
`,
  },

  /**
   * KEYS: tenant, tenants. ARGV: now, tenantId, then the settable fields as
   * field, value, … (tenantId included).
   * Creates with createdAt = modifiedAt = now; on update keeps createdAt and
   * moves modifiedAt only when a field really changed. Returns HGETALL, or
   * ${TYPE_FIXED} when the tenant exists with another type (having written
   * nothing: every field is compared before the one write).
   */
  upsertTenant: {
    numberOfKeys: 2,
    lua: `
local now, tenantId = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'createdAt', now, 'modifiedAt', now, unpack(ARGV, 3))
  redis.call('SADD', KEYS[2], tenantId)
else
  local changed = false
  for i = 3, #ARGV, 2 do
    if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then
      if ARGV[i] == 'type' then return '${TYPE_FIXED}' end
      changed = true
    end
  end
  if changed then
    redis.call('HSET', KEYS[1], 'modifiedAt', now, unpack(ARGV, 3))
  end
end
return redis.call('HGETALL', KEYS[1])
`,
  },

  /**
   * KEYS: user, tenant, user-tenants, tenant-members, membership, generation.
   * ARGV: userId, tenantId, session channel, role ('' for the default: admin
   * for the tenant's creator, else member), now (Unix seconds: `joined_at`).
   * Returns 0 when the user or the tenant does not exist, -1 when already a
   * member, else the new membership's generation; then publishes
   * `membership-added` in the same step (instances that refused the user's
   * tokens for the tenant must stop at once).
   */
  addMember: {
    numberOfKeys: 6,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local toUser = redis.call('SADD', KEYS[3], ARGV[2])
local toTenant = redis.call('SADD', KEYS[4], ARGV[1])
if toUser + toTenant == 0 then return -1 end
local generation = redis.call('INCR', KEYS[6])
local role = ARGV[4]
if role == nil or role == '' then
  role = ${creatorRole('KEYS[1]', 'KEYS[2]')}
end
-- A new record: nothing of one an earlier version left behind (it removed only the sets).
redis.call('DEL', KEYS[5])
redis.call('HSET', KEYS[5], 'generation', generation, 'role', role, 'joined_at', ARGV[5])
redis.call('PUBLISH', ARGV[3], cjson.encode({ kind = 'membership-added', userId = ARGV[1], tenantId = ARGV[2], generation = generation }))
return generation
`,
  },

  /**
   * KEYS: user-tenants, tenant-members, membership, generation, tenant.
   * ARGV: userId, tenantId, session channel, then for the last-admin guard
   * the membership and user key prefixes ('' and '': no guard).
   * Returns the generation the removal took when either side held the
   * membership, ${LAST_ADMIN_REFUSED} when the guard refused it, else 0.
   * Publishes `membership-removed` in the same step: no
   * instance can miss a removal that happened, and the user's tokens for the
   * tenant die with it.
   */
  removeMember: {
    numberOfKeys: 5,
    lua: `${refuseLastAdmin('KEYS[2]', 'ARGV[1]', 'ARGV[4]', 'ARGV[5]', 'KEYS[5]')}
local fromUser = redis.call('SREM', KEYS[1], ARGV[2])
local fromTenant = redis.call('SREM', KEYS[2], ARGV[1])
if fromUser + fromTenant == 0 then return 0 end
local generation = redis.call('INCR', KEYS[4])
redis.call('DEL', KEYS[3])
redis.call('PUBLISH', ARGV[3], cjson.encode({ kind = 'membership-removed', userId = ARGV[1], tenantId = ARGV[2], generation = generation }))
return generation
`,
  },

  /**
   * KEYS: tenant-members, membership, generation. ARGV: userId.
   * Returns { member (0/1), the membership's generation (false when none),
   * the generation counter }, read in one step.
   */
  readMembership: {
    numberOfKeys: 3,
    lua: `
local member = redis.call('SISMEMBER', KEYS[1], ARGV[1])
local generation = false
if member == 1 then generation = redis.call('HGET', KEYS[2], 'generation') end
return { member, generation, redis.call('GET', KEYS[3]) or '0' }
`,
  },

  /**
   * KEYS: tenant-members, membership, generation. ARGV: userId, tenantId,
   * session channel.
   * Returns the membership's generation, or 0 when the user is not a member.
   * A membership stored before generations existed (in the sets, without its
   * hash) takes one now, published as `membership-added`.
   */
  membershipForToken: {
    numberOfKeys: 3,
    lua: `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
local generation = redis.call('HGET', KEYS[2], 'generation')
if generation then return tonumber(generation) end
generation = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], 'generation', generation)
redis.call('PUBLISH', ARGV[3], cjson.encode({ kind = 'membership-added', userId = ARGV[1], tenantId = ARGV[2], generation = generation }))
return generation
`,
  },

  /**
   * KEYS: user, email, users, tenants, user-tenants, personal tenant,
   * personal tenant-members, generation, then tenant-members of each tenant
   * in ARGV, then the membership of each, then user-passkeys and the passkey
   * of each credential id in ARGV.
   * ARGV: userId, email, personal tenant id, session channel, the number of
   * the user's tenants, their ids, then the credential ids of the user's
   * passkeys — all as the caller read them.
   * Returns 0 when the user does not exist, ${REMOVAL_STALE} when the record or
   * the tenant or passkey list is no longer what the caller read (read again and retry),
   * else the generation the removal took. Publishes `membership-removed` for
   * every membership in the same step: every token of the user dies with it.
   */
  removeUser: {
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local userId, personal, channel = ARGV[1], ARGV[3], ARGV[4]
local record = redis.call('HMGET', KEYS[1], 'email', 'personalTenantId')
if record[1] ~= ARGV[2] or record[2] ~= personal then return ${REMOVAL_STALE} end
local n = tonumber(ARGV[5])
if redis.call('SCARD', KEYS[5]) ~= n then return ${REMOVAL_STALE} end
for i = 6, 5 + n do
  if redis.call('SISMEMBER', KEYS[5], ARGV[i]) == 0 then return ${REMOVAL_STALE} end
end
local passkeys, m = KEYS[9 + 2 * n], #ARGV - 5 - n
if redis.call('SCARD', passkeys) ~= m then return ${REMOVAL_STALE} end
for j = 1, m do
  if redis.call('SISMEMBER', passkeys, ARGV[5 + n + j]) == 0 then return ${REMOVAL_STALE} end
end
local generation = redis.call('INCR', KEYS[8])
for i = 1, n do
  redis.call('SREM', KEYS[8 + i], userId)
  redis.call('DEL', KEYS[8 + n + i])
  redis.call('PUBLISH', channel, cjson.encode({ kind = 'membership-removed', userId = userId, tenantId = ARGV[5 + i], generation = generation }))
end
for j = 1, m do redis.call('DEL', KEYS[9 + 2 * n + j]) end
redis.call('DEL', passkeys)
if redis.call('GET', KEYS[2]) == userId then redis.call('DEL', KEYS[2]) end
redis.call('DEL', KEYS[1], KEYS[5], KEYS[6], KEYS[7])
redis.call('SREM', KEYS[3], userId)
redis.call('SREM', KEYS[4], personal)
return generation
`,
  },

  /**
   * KEYS: tenant, tenant-members, tenants, generation, tenant-clients, then
   * user-tenants of each member in ARGV, then the membership of each, then
   * for each client in ARGV its hash, its key set and the hash of each of
   * its keys, then the tenant's idp and the idp-clients index, then the
   * tenant's domains and the verified-domains index (the last four).
   * ARGV: tenantId, session channel, the number of members, their ids, the
   * number of clients, then for each client its id, its number of keys and
   * their ids — all as the caller read them.
   * Returns 0 when there is no org tenant with the id, ${REMOVAL_STALE} when the
   * members or clients are no longer those the caller read (read again and
   * retry), else the generation the removal took. Publishes
   * `membership-removed` for every member in the same step. The tenant's
   * identity provider and its issuer + client id entry, its domains and their
   * verifications go too.
   */
  removeOrgTenant: {
    lua: `
if redis.call('HGET', KEYS[1], 'type') ~= 'orgtenant' then return 0 end
local tenantId, channel, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('SCARD', KEYS[2]) ~= n then return ${REMOVAL_STALE} end
for i = 4, 3 + n do
  if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then return ${REMOVAL_STALE} end
end
local a, k = 4 + n, 6 + 2 * n
local clients = tonumber(ARGV[a])
a = a + 1
if redis.call('SCARD', KEYS[5]) ~= clients then return ${REMOVAL_STALE} end
local doomed, gone = {}, {}
for c = 1, clients do
  local keyCount = tonumber(ARGV[a + 1])
  if redis.call('SISMEMBER', KEYS[5], ARGV[a]) == 0 then return ${REMOVAL_STALE} end
  if redis.call('SCARD', KEYS[k + 1]) ~= keyCount then return ${REMOVAL_STALE} end
  for j = 1, keyCount do
    if redis.call('SISMEMBER', KEYS[k + 1], ARGV[a + 1 + j]) == 0 then return ${REMOVAL_STALE} end
  end
  for j = k, k + 1 + keyCount do doomed[#doomed + 1] = KEYS[j] end
  gone[#gone + 1] = ARGV[a]
  a = a + 2 + keyCount
  k = k + 2 + keyCount
end
local generation = redis.call('INCR', KEYS[4])
for i = 1, n do
  redis.call('SREM', KEYS[5 + i], tenantId)
  redis.call('DEL', KEYS[5 + n + i])
  redis.call('PUBLISH', channel, cjson.encode({ kind = 'membership-removed', userId = ARGV[3 + i], tenantId = tenantId, generation = generation }))
end
for _, key in ipairs(doomed) do redis.call('DEL', key) end
for _, clientId in ipairs(gone) do
  redis.call('PUBLISH', channel, cjson.encode({ kind = 'client-changed', clientId = clientId }))
end
local idp, idpClients = KEYS[#KEYS - 3], KEYS[#KEYS - 2]
local issuer, clientId = unpack(redis.call('HMGET', idp, 'issuer', 'clientId'))
if issuer then
  local pair = issuer .. ' ' .. (clientId or '')
  if redis.call('HGET', idpClients, pair) == tenantId then redis.call('HDEL', idpClients, pair) end
end
local domains, verified = KEYS[#KEYS - 1], KEYS[#KEYS]
for _, domain in ipairs(redis.call('HKEYS', domains)) do
  if redis.call('HGET', verified, domain) == tenantId then redis.call('HDEL', verified, domain) end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[5], idp, domains)
redis.call('SREM', KEYS[3], tenantId)
return generation
`,
  },

  /**
   * KEYS: tenant-members, membership, user, tenant. ARGV: userId.
   * Returns { role, joined_at (false when the membership predates it) }, or
   * false when the user is not a member.
   */
  readMemberEntry: {
    numberOfKeys: 4,
    lua: `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return false end
local role = redis.call('HGET', KEYS[2], 'role') or ${creatorRole('KEYS[3]', 'KEYS[4]')}
return { role, redis.call('HGET', KEYS[2], 'joined_at') }
`,
  },

  /**
   * KEYS: tenant-members, membership, generation, user, tenant. ARGV: userId,
   * tenantId, role, session channel, then for the last-admin guard the
   * membership and user key prefixes ('' and '': no guard).
   * Returns 0 when the user is not a member, -1 when the member has the role
   * already, ${LAST_ADMIN_REFUSED} when the guard refused the change, else the
   * generation the change took; then publishes
   * `membership-added` with it in the same step (the member's tokens for the
   * tenant, issued under the old role, end on every instance).
   */
  setMemberRole: {
    numberOfKeys: 5,
    lua: `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
local current = redis.call('HGET', KEYS[2], 'role') or ${creatorRole('KEYS[4]', 'KEYS[5]')}
if current == ARGV[3] then return -1 end
${refuseLastAdmin('KEYS[1]', 'ARGV[1]', 'ARGV[5]', 'ARGV[6]', 'KEYS[5]')}
local generation = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], 'generation', generation, 'role', ARGV[3])
redis.call('PUBLISH', ARGV[4], cjson.encode({ kind = 'membership-added', userId = ARGV[1], tenantId = ARGV[2], generation = generation }))
return generation
`,
  },
} as const satisfies Record<string, ScriptDefinition>;

type ScriptName =
  | keyof typeof STORE_SCRIPTS
  | keyof typeof CLIENT_SCRIPTS
  | keyof typeof REFRESH_SCRIPTS
  | keyof typeof IDP_SCRIPTS
  | keyof typeof DOMAIN_SCRIPTS
  | keyof typeof PASSKEY_SCRIPTS
  | keyof typeof BROWSER_SESSION_SCRIPTS
  | keyof typeof TOTP_SCRIPTS;

/**
 * A client with the store's scripts as methods: keys first, then arguments
 * (for a script without `numberOfKeys`, the key count before the keys).
 */
export type ScriptedRedis = Redis &
  Record<ScriptName, (...keysThenArgs: (string | number)[]) => Promise<unknown>>;

/** Registers every store script on `redis` and returns it, typed with them. */
export function defineStoreScripts(redis: Redis): ScriptedRedis {
  for (const [name, definition] of Object.entries({
    ...STORE_SCRIPTS,
    ...CLIENT_SCRIPTS,
    ...REFRESH_SCRIPTS,
    ...IDP_SCRIPTS,
    ...DOMAIN_SCRIPTS,
    ...PASSKEY_SCRIPTS,
    ...BROWSER_SESSION_SCRIPTS,
    ...TOTP_SCRIPTS,
  })) {
    redis.defineCommand(name, definition);
  }
  return redis as ScriptedRedis;
}
