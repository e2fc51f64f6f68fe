/**
 * Rate-limit buckets shared by the instances on one Redis, settled in the
 * background (`proxy/rate-limits/route-rate-limits.ts` decides each request in process).
 *
 * One hash per bucket, `<prefix>rate:<bucket>`:
 * - `tokens`, `ts`: the shared bucket — what no instance holds yet, and when
 *   it was last refilled (Redis time, so instances' clocks do not matter);
 * - `i:<instance>` = `<seen ms>:<held>`: each taking part, what it holds.
 *
 * A lease is taken out of the shared bucket when granted, and what an
 * instance holds counts against the bucket's size, so between them the
 * shared tokens and every holding never exceed `burst`. A bucket new to an
 * instance admits one request before its first grant; that token is charged
 * here with the first call, and may put the shared bucket in debt (negative
 * tokens) that its refill pays back before anything is granted again. So
 * whatever the number of instances and however stale their view, the
 * cluster admits at most `burst + rate × T` in any window of T seconds, plus
 * the debt at the window's end (the bound in docs/rate-limits.md).
 *
 * One key per bucket and one script call per key, sent together: on Redis
 * Cluster each call goes to its key's master, no cross-slot pipeline needed.
 */
import type { Redis } from 'ioredis';
import type { Store } from './types.js';

/**
 * KEYS: the bucket. ARGV: rate per ms, burst, instance id, tokens it still
 * holds, 1 when leaving, ms after which a silent instance no longer counts,
 * tokens it admitted before its first grant (to charge). Returns the grant
 * and the shared tokens left (strings: Lua would truncate a number), and the
 * number of instances taking part.
 */
const LEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local me, held, leaving, stale = 'i:' .. ARGV[3], tonumber(ARGV[4]), ARGV[5] == '1', tonumber(ARGV[6])
local charge = tonumber(ARGV[7])
local fields = redis.call('HGETALL', KEYS[1])
local tokens, ts, others, othersHeld = burst, now, 0, 0
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  if name == 'tokens' then tokens = tonumber(value)
  elseif name == 'ts' then ts = tonumber(value)
  elseif name ~= me and string.sub(name, 1, 2) == 'i:' then
    local seen, holding = string.match(value, '^(%d+):(.+)$')
    if seen == nil or now - tonumber(seen) > stale then
      -- Gone silent: whatever it held is spent or lost, never handed out twice.
      redis.call('HDEL', KEYS[1], name)
    else
      others = others + 1
      othersHeld = othersHeld + tonumber(holding)
    end
  end
end
local mine = held
if leaving then
  tokens = tokens + held
  mine = 0
end
-- Refilled by time, charged for what was admitted before a grant (maybe into debt),
-- and never more than what no instance holds.
tokens = tokens + math.max(0, now - ts) * rate - charge
tokens = math.min(tokens, burst - othersHeld - mine)
local grant = 0
if leaving then
  redis.call('HDEL', KEYS[1], me)
  redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
else
  -- A fair share of everything in play, less what this instance already holds.
  local share = (tokens + othersHeld + mine) / (others + 1)
  grant = math.max(0, math.min(tokens, share - mine))
  tokens = tokens - grant
  redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now, me, now .. ':' .. (mine + grant))
end
-- Kept until a debt is paid and the bucket is full again, and every holding written off.
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - math.min(tokens, 0)) / rate) + stale)
return { tostring(grant), others + 1, tostring(tokens) }
`;

type LeasingRedis = Redis & {
  leaseRate(key: string, ...args: (string | number)[]): Promise<[string, number, string]>;
};

/** Registers the lease script on `redis`; returns the store's `leaseRates`. */
export function redisRateLeases(redis: Redis, keyPrefix: string): NonNullable<Store['leaseRates']> {
  redis.defineCommand('leaseRate', { numberOfKeys: 1, lua: LEASE_SCRIPT });
  const leasing = redis as LeasingRedis;
  return async (instance, requests) => {
    const settled = await Promise.allSettled(
      requests.map((r) =>
        leasing.leaseRate(
          `${keyPrefix}rate:${r.bucket}`,
          r.ratePerSecond / 1000,
          r.burst,
          instance.id,
          r.held,
          r.leaving ? 1 : 0,
          instance.silentAfterMs,
          r.charge,
        ),
      ),
    );
    const leases = settled.map((s) =>
      s.status === 'fulfilled'
        ? {
            grant: Number(s.value[0]),
            instances: Math.max(1, Number(s.value[1])),
            shared: Number(s.value[2]),
          }
        : undefined,
    );
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined && leases.every((l) => l === undefined)) {
      throw new Error('no rate-limit bucket could be settled', { cause: failure.reason });
    }
    return leases;
  };
}
