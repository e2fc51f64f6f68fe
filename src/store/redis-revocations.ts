/**
 * The Redis store's token deny-list, session events and revocation leases
 * (see `redis-context.ts`; layout in `redis-keys.ts`).
 */
import { revocationDeadlineMs } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { acknowledged, type RedisStoreContext } from './redis-context.js';
import { redisLeases } from './redis-revocation-leases.js';
import { watchSessionEvents } from './redis-session-events.js';
import type { RedisTopology } from './redis-topology.js';
import type { RevocationStore, SessionEventListener } from './revocations.js';

/**
 * `watchers` are this store's own (see `RedisStoreContext.tellWatchers`): each
 * listener is one of them while it watches.
 */
export function redisRevocations(
  context: RedisStoreContext,
  topology: RedisTopology,
  watchers: Set<SessionEventListener>,
): RevocationStore {
  const { redis, keys } = context;
  return {
    async revokeToken(jti, expiresAt) {
      const deadline = revocationDeadlineMs(expiresAt);
      // An expired token is refused anyway: no entry, and none shortened.
      if (Date.now() > deadline) return;
      await attempt(() => redis.revokeToken(keys.revoked(jti), deadline, keys.sessionChannel, jti));
      context.tellWatchers({ kind: 'token-revoked', jti });
      await acknowledged(context, keys.revoked(jti));
    },
    async isTokenRevoked(jti) {
      return (await attempt(() => redis.exists(keys.revoked(jti)))) === 1;
    },
    watchSessions(listener) {
      watchers.add(listener);
      const unwatch = watchSessionEvents(topology, keys.sessionChannel, listener);
      return () => {
        watchers.delete(listener);
        unwatch();
      };
    },
    leases: redisLeases(redis, keys),
  };
}
