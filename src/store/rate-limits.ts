/**
 * Counters for brute-force protection, kept where the rest of the state is:
 * on Redis when the store is Redis (so every instance counts the same
 * attempts), in process otherwise. rate-limiter-flexible does the counting;
 * this file gives it the store's outage policy: a counter that cannot be read
 * is `unavailable`, never a free pass.
 */
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { GatewayError } from '../errors.js';

export interface RateLimitSpec {
  /** Distinguishes the counter family, e.g. `login-email`. */
  name: string;
  /** Attempts allowed per window. */
  points: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /** Seconds until `key` may try again, or 0 when it may now. */
  retryAfter(key: string): Promise<number>;
  /** Counts one attempt; returns the seconds until `key` may try again (0: still allowed). */
  hit(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

export type RateLimiterFactory = (spec: RateLimitSpec) => RateLimiter;

export function memoryRateLimiters(): RateLimiterFactory {
  return (spec) =>
    wrap(
      new RateLimiterMemory({
        keyPrefix: spec.name,
        points: spec.points,
        duration: spec.windowSeconds,
      }),
      spec,
    );
}

export function redisRateLimiters(redis: Redis, keyPrefix: string): RateLimiterFactory {
  return (spec) =>
    wrap(
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${keyPrefix}rl:${spec.name}`,
        points: spec.points,
        duration: spec.windowSeconds,
      }),
      spec,
    );
}

function wrap(limiter: RateLimiterAbstract, spec: RateLimitSpec): RateLimiter {
  const secondsOf = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return {
    async retryAfter(key) {
      const res = await attempt(() => limiter.get(key));
      return res !== null && res.consumedPoints >= spec.points ? secondsOf(res) : 0;
    },
    async hit(key) {
      try {
        const res = await limiter.consume(key);
        return res.remainingPoints <= 0 ? secondsOf(res) : 0;
      } catch (err) {
        // rate-limiter-flexible rejects with the result when over the limit, with an Error on a store failure.
        if (err instanceof RateLimiterRes) return secondsOf(err);
        throw unavailable(err);
      }
    },
    async reset(key) {
      await attempt(() => limiter.delete(key));
    },
  };
}

async function attempt<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw unavailable(err);
  }
}

function unavailable(cause: unknown): GatewayError {
  return new GatewayError('unavailable', 'The store is unreachable.', { cause });
}
