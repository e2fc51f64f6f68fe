/**
 * The Redis store's TOTP records (see `totp.ts`; layout in `redis-keys.ts`,
 * scripts in `redis-totp-scripts.ts`). A write is answered once a replica has it.
 */
import { attempt } from './redis-attempt.js';
import type { RedisStoreContext } from './redis-context.js';
import type { TotpRecord, TotpStore } from './totp.js';

const RECOVERY = 'rc:';

function recordOf(userId: string, hash: Record<string, string>): TotpRecord | null {
  if (Object.keys(hash).length === 0) return null;
  const { secret, confirmedAt, lastStep, pending, pendingAt } = hash;
  return {
    userId,
    ...(secret === undefined ? {} : { secretSealed: secret }),
    ...(confirmedAt === undefined ? {} : { confirmedAt: Number(confirmedAt) }),
    lastStep: lastStep === undefined ? 0 : Number(lastStep),
    recoveryCodesLeft: Object.keys(hash).filter((field) => field.startsWith(RECOVERY)).length,
    ...(pending === undefined
      ? {}
      : { pending: { secretSealed: pending, createdAt: Number(pendingAt) } }),
  };
}

export function redisTotp(context: RedisStoreContext): TotpStore {
  const { redis, keys } = context;
  const written = async (reply: unknown, userId: string) => {
    if (reply !== 1) return false;
    await context.replicated(keys.totp(userId));
    return true;
  };
  return {
    putPendingTotp: async (userId, pending) =>
      written(
        await attempt(() =>
          redis.putPendingTotp(
            keys.user(userId),
            keys.totp(userId),
            pending.secretSealed,
            pending.createdAt,
          ),
        ),
        userId,
      ),
    getTotp: async (userId) =>
      recordOf(userId, await attempt(() => redis.hgetall(keys.totp(userId)))),
    confirmTotp: async (userId, secretSealed, { step, recoveryDigests, at }) =>
      written(
        await attempt(() =>
          redis.confirmTotp(keys.totp(userId), secretSealed, step, at, ...recoveryDigests),
        ),
        userId,
      ),
    acceptTotpStep: async (userId, step) =>
      written(await attempt(() => redis.acceptTotpStep(keys.totp(userId), step)), userId),
    takeRecoveryCode: async (userId, digest) =>
      written(await attempt(() => redis.takeRecoveryCode(keys.totp(userId), digest)), userId),
    removeTotp: async (userId) =>
      written(await attempt(() => redis.del(keys.totp(userId))), userId),
  };
}
