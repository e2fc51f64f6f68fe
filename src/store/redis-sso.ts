/** The Redis store's one-time browser sign-in records (see `sso.ts`; layout in `redis-keys.ts`). */
import { attempt } from './redis-attempt.js';
import type { RedisStoreContext } from './redis-context.js';
import type { SsoStore } from './sso.js';

/** One-time records: a key with a TTL, taken by GETDEL (one taker wins), added by SET NX (one adder wins). */
export function redisSso(context: RedisStoreContext): SsoStore {
  const { redis, keys } = context;
  return {
    putSsoRecord: async (kind, key, value, ttlSeconds) => {
      const name = keys.ssoRecord(kind, key);
      await attempt(() => redis.set(name, value, 'EX', ttlSeconds));
      // The callback may reach another instance, reading after a failover.
      await context.replicated(name);
    },
    takeSsoRecord: async (kind, key) => attempt(() => redis.getdel(keys.ssoRecord(kind, key))),
    readSsoRecord: async (kind, key) => attempt(() => redis.get(keys.ssoRecord(kind, key))),
    addSsoRecord: async (kind, key, value, ttlSeconds) => {
      const name = keys.ssoRecord(kind, key);
      // SET NX: of two concurrent adds one wins (a logout token's jti seen once).
      const written = await attempt(() => redis.set(name, value, 'EX', ttlSeconds, 'NX'));
      if (written === null) return false;
      await context.replicated(name);
      return true;
    },
  };
}
