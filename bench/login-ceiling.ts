/**
 * The token endpoint's theoretical ceiling: logins are bcrypt-bound, so with
 * one compare per login and a pool of one thread per core, no more than
 * threads ÷ (one compare's time) logins per second can be served.
 */
import { execFileSync } from 'node:child_process';
import { PASSWORD_WORKERS } from './gateway-config.js';
import { fileURLToPath } from 'node:url';

/** The measured ceiling and what it was computed from. */
export interface LoginCeiling {
  threads: number;
  cost: number;
  compareMs: number;
  loginsPerSecond: number;
}

const TIMING_SCRIPT = fileURLToPath(new URL('./bcrypt-timing.mjs', import.meta.url));

/**
 * Times one `bcryptjs.compareSync` at `cost` (median of `runs`) and divides
 * the pool's thread count (the gateway's default: the cores) by it. The
 * compares run in a plain `node` child, as in the gateway's workers: this
 * process runs under tsx, where bcryptjs is measurably slower.
 */
export function measureLoginCeiling(cost = 10, runs = 5): LoginCeiling {
  const output = execFileSync(process.execPath, [TIMING_SCRIPT, String(cost), String(runs)], {
    encoding: 'utf8',
  });
  const times = (JSON.parse(output) as number[]).sort((a, b) => a - b);
  const compareMs = times[Math.floor(times.length / 2)] as number;
  const threads = PASSWORD_WORKERS;
  return { threads, cost, compareMs, loginsPerSecond: (threads * 1000) / compareMs };
}
