/**
 * The Lua scripts of browser sessions (registered with the others by
 * `defineStoreScripts` in `redis-scripts.ts`). Each touches one key, so it
 * runs in one slot of a cluster whatever the key's tag.
 */
import type { ScriptDefinition } from './redis-script-definition.js';

export const BROWSER_SESSION_SCRIPTS = {
  /**
   * KEYS: the user's index. ARGV: the session id, its absolute end, now
   * (Unix seconds). Drops the entries ended by now, enters the session, and
   * keeps the index as long as its last session.
   */
  indexBrowserSession: {
    numberOfKeys: 1,
    lua: `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], tonumber(last[2]))
return 1
`,
  },

  /**
   * KEYS: the session. ARGV: the use's time (Unix seconds).
   * Records it as `lastSeenAt` unless a later one is; keeps the key's expiry.
   * Nothing for a session that is gone. Returns 1 when it wrote.
   */
  touchBrowserSession: {
    numberOfKeys: 1,
    lua: `
local json = redis.call('GET', KEYS[1])
if not json then return 0 end
local session = cjson.decode(json)
local at = tonumber(ARGV[1])
if type(session.lastSeenAt) ~= 'number' or at <= session.lastSeenAt then return 0 end
session.lastSeenAt = at
redis.call('SET', KEYS[1], cjson.encode(session), 'KEEPTTL')
return 1
`,
  },
} as const satisfies Record<string, ScriptDefinition>;
