/**
 * The Lua scripts of passkeys (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`, same conventions: every check
 * before the first write, every key in KEYS under `{dir}`). A passkey is a
 * hash: `record` (the fixed fields as JSON), `counter` and `lastUsedAt`
 * (written by a sign-in); the user's set names their credential ids.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

export const PASSKEY_SCRIPTS = {
  /**
   * KEYS: user, passkey, user-passkeys. ARGV: credential id, the record as
   * JSON, its counter, the most passkeys a user holds.
   * Returns 'no_user', 'credential_taken', 'too_many' or 'added'.
   */
  addPasskey: {
    numberOfKeys: 3,
    lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_user' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'credential_taken' end
if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[4]) then return 'too_many' end
redis.call('HSET', KEYS[2], 'record', ARGV[2], 'counter', ARGV[3])
redis.call('SADD', KEYS[3], ARGV[1])
return 'added'
`,
  },

  /**
   * KEYS: passkey. ARGV: the new counter, now (Unix seconds).
   * Returns 'missing', 'counter_regressed' (WebAuthn §6.1.1: see
   * `passkeys.ts`, nothing written) or 'used'.
   */
  usePasskey: {
    numberOfKeys: 1,
    lua: `
local stored = redis.call('HGET', KEYS[1], 'counter')
if not stored then return 'missing' end
local old, new = tonumber(stored), tonumber(ARGV[1])
if (old ~= 0 or new ~= 0) and new <= old then return 'counter_regressed' end
redis.call('HSET', KEYS[1], 'counter', ARGV[1], 'lastUsedAt', ARGV[2])
return 'used'
`,
  },

  /**
   * KEYS: user-passkeys, passkey. ARGV: credential id.
   * Returns 1 when the user held it (now removed), else 0.
   */
  removePasskey: {
    numberOfKeys: 2,
    lua: `
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
return 1
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
