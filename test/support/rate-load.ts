/**
 * Drives one path on several gateways as hard as a few keep-alive
 * connections each allow, and counts the answers: the rate-limit suite and
 * `bench/rate-limits.ts` share it.
 */
import { Pool } from 'undici';
import { bearer } from './gateway.js';

export interface LoadCounts {
  admitted: number;
  limited: number;
  /** Anything but 200 and 429 (a test fails on any). */
  other: Map<number, number>;
  /** From the first request sent to the last answer read. */
  elapsedMs: number;
}

export async function driveLoad(options: {
  urls: readonly string[];
  path: string;
  token: string;
  /** Requests in flight per gateway. */
  concurrency: number;
  durationMs: number;
}): Promise<LoadCounts> {
  const counts: LoadCounts = { admitted: 0, limited: 0, other: new Map(), elapsedMs: 0 };
  const pools = options.urls.map((url) => new Pool(url, { connections: options.concurrency }));
  const started = performance.now();
  const until = started + options.durationMs;
  const loop = async (pool: Pool) => {
    while (performance.now() < until) {
      const res = await pool.request({
        method: 'GET',
        path: options.path,
        headers: { authorization: bearer(options.token) },
      });
      await res.body.dump();
      if (res.statusCode === 200) counts.admitted++;
      else if (res.statusCode === 429) counts.limited++;
      else counts.other.set(res.statusCode, (counts.other.get(res.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(
    pools.flatMap((pool) => Array.from({ length: options.concurrency }, () => loop(pool))),
  );
  counts.elapsedMs = performance.now() - started;
  await Promise.all(pools.map((pool) => pool.close()));
  return counts;
}
