/**
 * Open-loop load at a fixed rate, evenly paced, on several targets at once:
 * every target gets `ratePerSecond`, their requests interleaved one by one
 * (A, B, A, B …), so each second of the run holds the same number of requests
 * to each. A stall of the machine (this kind of machine has them: see
 * scenarios.ts) then lands on every target alike instead of on whichever one
 * happened to be measured in that second, and the targets' percentiles can be
 * compared second by second.
 *
 * Request i of a target is due at start + i / rate whatever became of the
 * ones before. Its latency runs from when it is handed to the HTTP client, so
 * the wait for a free connection behind slow answers counts (a stall cannot
 * hide the requests it delayed: coordinated omission), while the pacer's own
 * lateness does not (Node's timers tick in whole milliseconds). Connections
 * are opened and used once before the clock starts: the run measures
 * requests on kept-alive connections, not TCP handshakes.
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
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { LoadTarget, Run } from './load.js';

/** How long to wait for the last answers once every request has been sent. */
const DRAIN_MS = 10_000;

/** One target's figures: the whole run, and its latencies second by second. */
export interface PacedRun extends Run {
  /** Latencies of the requests sent in each second of the run (index = second). */
  perSecond: RecordableHistogram[];
}

interface Flow {
  target: LoadTarget;
  agent: Agent;
  run: PacedRun;
}

/** A histogram as load.ts keeps them: 1 µs .. 60 s, three significant figures. */
const histogram = (): RecordableHistogram =>
  createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });

/**
 * Sends `ratePerSecond × seconds` GETs to each of `targets`, interleaved, on
 * schedule; resolves once all are answered, with one run per target (same order).
 */
export async function drivePaced(
  targets: readonly LoadTarget[],
  ratePerSecond: number,
  seconds: number,
): Promise<PacedRun[]> {
  const flows: Flow[] = targets.map((target) => ({
    target,
    // At most `connections` requests on the wire; later ones wait in the agent, on the clock.
    agent: new Agent({ keepAlive: true, maxSockets: target.connections }),
    run: {
      completed: 0,
      seconds,
      statuses: {},
      non2xx: 0,
      errors: 0,
      latencies: histogram(),
      perSecond: Array.from({ length: Math.ceil(seconds) }, histogram),
    },
  }));
  await Promise.all(flows.map(openConnections));
  try {
    await pace(flows, ratePerSecond, seconds);
  } finally {
    for (const flow of flows) flow.agent.destroy();
  }
  return flows.map((flow) => flow.run);
}

/** One request on each of a target's connections at once, so all of them are open and used. */
async function openConnections(flow: Flow): Promise<void> {
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        flow.target.url,
        { agent: flow.agent, headers: flow.target.headers ?? {} },
        (res) => {
          res.resume();
          res.once('end', resolve);
        },
      );
      req.once('error', reject);
      req.end();
    });
  await Promise.all(Array.from({ length: flow.target.connections }, one));
}

function pace(flows: Flow[], ratePerSecond: number, seconds: number): Promise<void> {
  const perTarget = Math.round(ratePerSecond * seconds);
  const total = perTarget * flows.length;
  const intervalNs = 1e9 / (ratePerSecond * flows.length);
  let sent = 0;
  let settledCount = 0;

  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    let drain: NodeJS.Timeout | undefined;
    let done = false;
    const settle = (): void => {
      settledCount++;
      if (done || sent < total || settledCount < total) return;
      done = true;
      clearTimeout(drain);
      resolve();
    };
    const send = (flow: Flow, second: number): void => {
      const { run } = flow;
      const at = process.hrtime.bigint();
      const req = request(
        flow.target.url,
        { agent: flow.agent, headers: flow.target.headers ?? {} },
        (res) => {
          const status = res.statusCode ?? 0;
          res.resume();
          res.once('end', () => {
            const us = Math.max(1, Math.round(Number(process.hrtime.bigint() - at) / 1000));
            run.latencies.record(us);
            run.perSecond[second]?.record(us);
            run.statuses[status] = (run.statuses[status] ?? 0) + 1;
            if (status < 200 || status > 299) run.non2xx++;
            run.completed++;
            settle();
          });
        },
      );
      req.once('error', () => {
        run.errors++;
        settle();
      });
      req.end();
    };
    /** Sends every request that is due, then sleeps until the next one is. */
    const tick = (): void => {
      const elapsed = Number(process.hrtime.bigint() - start);
      while (sent < total && sent * intervalNs <= elapsed) {
        const flow = flows[sent % flows.length] as Flow;
        send(flow, Math.floor((sent * intervalNs) / 1e9));
        sent++;
      }
      if (sent < total) {
        setTimeout(tick, Math.max(0, (sent * intervalNs - elapsed) / 1e6));
        return;
      }
      // Whatever is still unanswered after the drain counts as an error.
      drain = setTimeout(() => {
        for (const { run } of flows) run.errors = perTarget - run.completed;
        settledCount = total;
        done = true;
        resolve();
      }, DRAIN_MS);
    };
    tick();
  });
}
