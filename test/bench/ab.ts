/**
 * Two builds of the gateway, A and B, on the bench's upstream, Redis and
 * request, in interleaved rounds of fresh processes: `tsx test/bench/ab.ts
 * <A checkout> <B checkout>` (each already built: `dist/cli.js`). Prints
 * req/s and server CPU µs per request per round and the medians. For
 * "did this change cost anything", where two separate `npm run bench` runs
 * differ by more than the change.
 */
import { join, resolve } from 'node:path';
import { startBackends } from './backends.js';
import { processCpuSeconds } from './cpu-usage.js';
import { positiveInt } from './env.js';
import { REQUEST_PATH } from './gateway-config.js';
import { drive } from './load.js';
import { createTeardown, runMain, sleep, spawnNode, waitForPort } from './processes.js';

const ROUNDS = positiveInt('BENCH_ROUNDS', 6);
const SECONDS = positiveInt('BENCH_SECONDS', 4);
const WARMUP_SECONDS = positiveInt('BENCH_WARMUP_SECONDS', 3);

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const teardown = createTeardown();

runMain(
  'ab',
  async () => {
    const [a, b] = process.argv.slice(2).map((dir) => resolve(dir));
    if (a === undefined || b === undefined)
      throw new Error('usage: tsx test/bench/ab.ts <A checkout> <B checkout>');
    {
      const backends = await startBackends(teardown);
      const url = `http://127.0.0.1:${backends.gatewayPort}${REQUEST_PATH}`;
      const results = new Map<string, { rps: number[]; cpu: number[] }>([
        [a, { rps: [], cpu: [] }],
        [b, { rps: [], cpu: [] }],
      ]);
      for (let round = 1; round <= ROUNDS; round++) {
        for (const dir of round % 2 ? [a, b] : [b, a]) {
          const gw = spawnNode(
            'gateway',
            [join(dir, 'dist/cli.js'), 'serve', '--config', backends.files.configFile],
            dir,
          );
          await waitForPort(gw, backends.gatewayPort, 30_000);
          const target = { name: dir, url, connections: 50, headers: backends.headers };
          await drive(target, { seconds: WARMUP_SECONDS });
          const cpuBefore = processCpuSeconds(gw.pid);
          const run = await drive(target, { seconds: SECONDS });
          const cpu = processCpuSeconds(gw.pid) - cpuBefore;
          await gw.stop();
          if (run.non2xx + run.errors > 0)
            throw new Error(`${dir}: ${run.non2xx} non-2xx, ${run.errors} errors`);
          const r = results.get(dir) as { rps: number[]; cpu: number[] };
          r.rps.push(run.completed / run.seconds);
          r.cpu.push((cpu * 1e6) / run.completed);
          console.log(
            `round ${round} ${dir}: ${(run.completed / run.seconds).toFixed(0)} req/s, ${((cpu * 1e6) / run.completed).toFixed(1)} µs/req`,
          );
          await sleep(500);
        }
      }
      for (const [dir, r] of results) {
        console.log(
          `${dir}: median ${median(r.rps).toFixed(0)} req/s, ${median(r.cpu).toFixed(1)} µs/req (${Math.min(...r.cpu).toFixed(1)}–${Math.max(...r.cpu).toFixed(1)})`,
        );
      }
    }
  },
  teardown,
);
