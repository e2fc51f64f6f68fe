/**
 * Counters for brute-force protection, kept where the rest of the state is:
 * on Redis when the store is Redis (so every instance counts the same
 * attempts), in process otherwise. rate-limiter-flexible does the counting
 * (fixed windows; one atomic script per step on Redis, one key each, so it
 * runs on Redis Cluster too); this file gives it the store's outage policy:
 * a counter that cannot be read is `unavailable`, never a free pass.
 *
 * An attempt is reserved — checked and counted in one atomic `consume` —
 * before the work it pays for, so concurrent attempts never take more than
 * `points` between them (checked before bcrypt and counted after it, 44 of
 * 60 concurrent guesses would be checked against a limit of 5).
 */
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { GatewayError } from '../errors.js';

export interface LoginCounterSpec {
  /** Distinguishes the counter family, e.g. `login-email`. */
  name: string;
  /** Attempts allowed per window. */
  points: number;
  windowSeconds: number;
}

/** The outcome of {@link LoginCounter.reserve}. */
export type Reservation =
  | {
      readonly granted: true;
      /** Gives the point back; only the first call counts. */
      refund(): Promise<void>;
    }
  | {
      readonly granted: false;
      /** Seconds until `key` may try again (at least 1). */
      readonly retryAfter: number;
    };

export interface LoginCounter {
  /** Seconds until `key` may try again, or 0 when it may now. */
  retryAfter(key: string): Promise<number>;
  /** Takes one point for `key` if one is left, in one atomic step. Refused, it counts nothing. */
  reserve(key: string): Promise<Reservation>;
  /** Counts one attempt, even past the limit; returns the seconds until `key` may try again (0: still allowed). */
  hit(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

export type LoginCounterFactory = (spec: LoginCounterSpec) => LoginCounter;

export function memoryLoginCounters(): LoginCounterFactory {
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

export function redisLoginCounters(redis: Redis, keyPrefix: string): LoginCounterFactory {
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

function wrap(limiter: RateLimiterAbstract, spec: LoginCounterSpec): LoginCounter {
  const secondsOf = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  /** `consume`, with rate-limiter-flexible's over-the-limit rejection as a result. */
  const consume = (key: string): Promise<RateLimiterRes> =>
    limiter.consume(key).catch((err: unknown) => {
      // It rejects with the result when over the limit, with an Error on a store failure.
      if (err instanceof RateLimiterRes) return err;
      throw unavailable(err);
    });
  return {
    async retryAfter(key) {
      const res = await attempt(() => limiter.get(key));
      return res !== null && res.consumedPoints >= spec.points ? secondsOf(res) : 0;
    },
    async reserve(key) {
      const res = await consume(key);
      if (res.consumedPoints > spec.points) {
        // consume counted the refused attempt too: take it back, so that
        // knocking on a spent budget costs nothing and changes nothing.
        await attempt(() => limiter.reward(key, 1));
        return { granted: false, retryAfter: secondsOf(res) };
      }
      let refunded = false;
      return {
        granted: true,
        async refund() {
          if (refunded) return;
          refunded = true;
          await attempt(() => limiter.reward(key, 1));
        },
      };
    },
    async hit(key) {
      const res = await consume(key);
      return res.consumedPoints >= spec.points ? secondsOf(res) : 0;
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
