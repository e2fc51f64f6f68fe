/**
 * The Lua scripts of users' TOTP records (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`). A user's record is one hash
 * under `{dir}` (`redis-keys.ts` `totp`): `secret`, `confirmedAt`,
 * `lastStep`, `pending`, `pendingAt`, and one field `rc:<digest>` per
 * recovery code left, so that taking a code is one HDEL.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

export const TOTP_SCRIPTS = {
  /**
   * KEYS: user, totp. ARGV: the pending secret (sealed), its Unix seconds.
   * Returns 0 when there is no such user, else 1.
   */
  putPendingTotp: {
    numberOfKeys: 2,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'pending', ARGV[1], 'pendingAt', ARGV[2])
return 1
`,
  },

  /**
   * KEYS: totp. ARGV: the pending secret (sealed) to confirm, the step, the
   * Unix seconds, then the recovery codes' digests. Returns 0 when the
   * pending enrolment is not that one, else 1 (the record replaced whole).
   */
  confirmTotp: {
    numberOfKeys: 1,
    lua: `
if redis.call('HGET', KEYS[1], 'pending') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'secret', ARGV[1], 'lastStep', ARGV[2], 'confirmedAt', ARGV[3])
for i = 4, #ARGV do redis.call('HSET', KEYS[1], 'rc:' .. ARGV[i], '1') end
return 1
`,
  },

  /**
   * KEYS: totp. ARGV: the step. Returns 1 when the user has a confirmed
   * secret and the step is later than the last accepted (then recorded), else 0.
   */
  acceptTotpStep: {
    numberOfKeys: 1,
    lua: `
if redis.call('HEXISTS', KEYS[1], 'secret') == 0 then return 0 end
local last = tonumber(redis.call('HGET', KEYS[1], 'lastStep') or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('HSET', KEYS[1], 'lastStep', ARGV[1])
return 1
`,
  },

  /**
   * KEYS: totp. ARGV: a recovery code's digest. Returns 1 when the user has
   * a confirmed secret and the code was left (then removed), else 0.
   */
  takeRecoveryCode: {
    numberOfKeys: 1,
    lua: `
if redis.call('HEXISTS', KEYS[1], 'secret') == 0 then return 0 end
return redis.call('HDEL', KEYS[1], 'rc:' .. ARGV[1])
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
