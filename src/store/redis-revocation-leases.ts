/**
 * Revocation leases kept in Redis (see `RevocationLeases` in `types.ts`).
 * Lease ends are Redis milliseconds (`TIME` inside each script), so the
 * holders' and the revoker's clocks never need to agree on the hour, only to
 * run at about the same rate. Every key lives under `{leases}` (`redis-keys.ts`),
 * so each script touches one cluster slot.
 */
import type { Redis } from 'ioredis';
import { attempt } from './redis-attempt.js';
import type { RedisKeys } from './redis-keys.js';
import type { RevocationLeases } from './types.js';

/** How long an acknowledgement set outlives its confirmation (ms); the confirmation is over long before. */
const ACKS_KEPT_MS = 60_000;

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** KEYS[1] holders, KEYS[2] acks: the live holders without an acknowledgement, and their lease ends. */
const UNACKNOWLEDGED = `${NOW}
local holders = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local pending = {}
for i = 1, #holders, 2 do
  if redis.call('SISMEMBER', KEYS[2], holders[i]) == 0 then
    pending[#pending + 1] = { holders[i], tonumber(holders[i + 1]) - now }
  end
end
`;

const SCRIPTS = {
  /** KEYS: holders. ARGV: holder, ms. 1: renewed; 0: a new lease (none, ended or fenced). */
  holdLease: {
    numberOfKeys: 1,
    lua: `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if held then return 1 end
return 0
`,
  },
  /** KEYS: holders, acks. The number of live holders that have not acknowledged. */
  unacknowledged: {
    numberOfKeys: 2,
    lua: `${UNACKNOWLEDGED}
return #pending
`,
  },
  /** KEYS: holders, acks. Removes the live holders that have not acknowledged; the longest time one had left. */
  fenceUnacknowledged: {
    numberOfKeys: 2,
    lua: `${UNACKNOWLEDGED}
local longest = 0
for _, holder in ipairs(pending) do
  redis.call('ZREM', KEYS[1], holder[1])
  if holder[2] > longest then longest = holder[2] end
end
return longest
`,
  },
} as const;

type LeaseRedis = Redis &
  Record<keyof typeof SCRIPTS, (...args: (string | number)[]) => Promise<unknown>>;

/** The leases of one key prefix on `redis`; a Redis failure is the store's `unavailable`. */
export function redisLeases(redis: Redis, keys: RedisKeys): RevocationLeases {
  for (const [name, definition] of Object.entries(SCRIPTS)) redis.defineCommand(name, definition);
  const scripted = redis as LeaseRedis;
  return {
    async hold(holderId, ms) {
      return (await attempt(() => scripted.holdLease(keys.leaseHolders, holderId, ms))) === 1;
    },
    async release(holderId) {
      await attempt(() => redis.zrem(keys.leaseHolders, holderId));
    },
    async requestConfirmation(confirmationId, events) {
      const message = JSON.stringify({ kind: 'confirm', id: confirmationId, events });
      await attempt(() => redis.publish(keys.sessionChannel, message));
    },
    async acknowledge(confirmationId, holderId) {
      const acks = keys.leaseAcks(confirmationId);
      await attempt(() => redis.multi().sadd(acks, holderId).pexpire(acks, ACKS_KEPT_MS).exec());
    },
    async unacknowledged(confirmationId) {
      return Number(
        await attempt(() =>
          scripted.unacknowledged(keys.leaseHolders, keys.leaseAcks(confirmationId)),
        ),
      );
    },
    async fenceUnacknowledged(confirmationId) {
      return Number(
        await attempt(() =>
          scripted.fenceUnacknowledged(keys.leaseHolders, keys.leaseAcks(confirmationId)),
        ),
      );
    },
  };
}
