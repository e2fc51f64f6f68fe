/**
 * Open-loop load at a fixed rate, evenly paced: request i is due at
 * start + i / rate whatever became of the ones before. Its latency runs from
 * when it is handed to the HTTP client, so the wait for a free connection
 * behind slow answers counts (a stall cannot hide the requests it delayed:
 * coordinated omission), while the pacer's own lateness does not (Node's
 * timers tick in whole milliseconds, as long as the interval at 1000 req/s).
 *
 * Why not autocannon: its `overallRate` is a budget per second, not a pace.
 * Each connection sends back to back until it has made its share of the
 * second, then waits for the next one, so "1000 req/s" is a burst at full
 * speed at the top of every second and its p99 is queueing behind that burst
 * (connections × CPU per request), not what a proxy adds to one request. The
 * load testers that pace evenly (wrk2, vegeta) are in neither registry here;
 * loadtest paces but reports whole milliseconds. The HTTP is Node's own client.
 */
import { Agent, request } from 'node:http';
import { createHistogram } from 'node:perf_hooks';
import type { LoadTarget, Run } from './load.js';

/** How long to wait for the last answers once every request has been sent. */
const DRAIN_MS = 10_000;

/** Sends `ratePerSecond × seconds` GETs to `target` on schedule; resolves once all are answered. */
export function drivePaced(
  target: LoadTarget,
  ratePerSecond: number,
  seconds: number,
): Promise<Run> {
  // 1 µs .. 60 s, three significant figures (as load.ts's).
  const latencies = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  // At most `connections` requests on the wire; later ones wait in the agent, on the clock.
  const agent = new Agent({ keepAlive: true, maxSockets: target.connections });
  const total = Math.round(ratePerSecond * seconds);
  const intervalNs = 1e9 / ratePerSecond;
  const statuses: Record<string, number> = {};
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;

  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    let drain: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (): void => {
      if (settled || sent < total || completed + errors < total) return;
      settled = true;
      clearTimeout(drain);
      agent.destroy();
      resolve({ completed, seconds, statuses, non2xx, errors, latencies });
    };
    const send = (): void => {
      const at = process.hrtime.bigint();
      const req = request(target.url, { agent, headers: target.headers ?? {} }, (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        res.once('end', () => {
          latencies.record(Math.max(1, Math.round(Number(process.hrtime.bigint() - at) / 1000)));
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status < 200 || status > 299) non2xx++;
          completed++;
          settle();
        });
      });
      req.once('error', () => {
        errors++;
        settle();
      });
      req.end();
    };
    /** Sends every request that is due, then sleeps until the next one is. */
    const tick = (): void => {
      const elapsed = Number(process.hrtime.bigint() - start);
      while (sent < total && sent * intervalNs <= elapsed) {
        send();
        sent++;
      }
      if (sent < total) {
        setTimeout(tick, Math.max(0, (sent * intervalNs - elapsed) / 1e6));
        return;
      }
      // Whatever is still unanswered after the drain counts as an error.
      drain = setTimeout(() => {
        errors = total - completed;
        settle();
      }, DRAIN_MS);
      settle();
    };
    tick();
  });
}
