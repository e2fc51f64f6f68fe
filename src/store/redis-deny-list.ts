/** The Redis store's token deny-list (see `redis-context.ts`; layout in `redis-keys.ts`). */
import { revocationDeadlineMs } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { acknowledged, type RedisStoreContext } from './redis-context.js';
import type { Store } from './types.js';

export function redisDenyList(
  context: RedisStoreContext,
): Pick<Store, 'revokeToken' | 'isTokenRevoked'> {
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
  };
}
