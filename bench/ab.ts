/**
 * Two builds of the gateway, A and B, on the bench's upstream, Redis and
 * request, in interleaved rounds of fresh processes: `tsx bench/ab.ts
 * <A checkout> <B checkout>` (each already built: `dist/cli.js`). Prints
 * req/s and server CPU µs per request per round and the medians. For
 * "did this change cost anything", where two separate `npm run bench` runs
 * differ by more than the change.
 *
 * `BENCH_B_TRACING=<ratio>` runs side B with tracing on at that sample ratio
 * (spans exported to the bench's upstream, which answers 200): with the same
 * checkout on both sides, what tracing costs when it is on.
 */
import { join, resolve } from 'node:path';
import { startBackends } from './backends.js';
import { processCpuSeconds } from './cpu-usage.js';
import { positiveInt } from './env.js';
import { REQUEST_PATH, withTracing } from './gateway-config.js';
import { drive } from './load.js';
import { median } from './results.js';
import { createTeardown, runMain, sleep, spawnNode, waitForPort } from './processes.js';

const ROUNDS = positiveInt('BENCH_ROUNDS', 6);
const SECONDS = positiveInt('BENCH_SECONDS', 4);
const WARMUP_SECONDS = positiveInt('BENCH_WARMUP_SECONDS', 3);

const teardown = createTeardown();

runMain(
  'ab',
  async () => {
    const [a, b] = process.argv.slice(2).map((dir) => resolve(dir));
    if (a === undefined || b === undefined)
      throw new Error('usage: tsx bench/ab.ts <A checkout> <B checkout>');
    const backends = await startBackends(teardown);
    const url = `http://127.0.0.1:${backends.gatewayPort}${REQUEST_PATH}`;
    // By side, not by path: a checkout against itself (A/A) shows the noise.
    const tracingRatio = process.env.BENCH_B_TRACING;
    const configB =
      tracingRatio === undefined
        ? backends.files.configFile
        : withTracing(backends.files, Number(tracingRatio), `${backends.upstreamUrl}/v1/traces`);
    const sides = [
      {
        label: 'A',
        dir: a,
        config: backends.files.configFile,
        rps: [] as number[],
        cpu: [] as number[],
      },
      { label: 'B', dir: b, config: configB, rps: [] as number[], cpu: [] as number[] },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const side of round % 2 ? sides : [...sides].reverse()) {
        const gw = spawnNode(
          'gateway',
          [join(side.dir, 'dist/cli.js'), 'serve', '--config', side.config],
          side.dir,
        );
        await waitForPort(gw, backends.gatewayPort, 30_000);
        const target = { name: side.label, url, connections: 50, headers: backends.headers };
        await drive(target, { seconds: WARMUP_SECONDS });
        const cpuBefore = processCpuSeconds(gw.pid);
        const run = await drive(target, { seconds: SECONDS });
        const cpu = processCpuSeconds(gw.pid) - cpuBefore;
        await gw.stop();
        if (run.non2xx + run.errors > 0)
          throw new Error(`${side.label}: ${run.non2xx} non-2xx, ${run.errors} errors`);
        const rps = run.completed / run.seconds;
        const cpuUs = (cpu * 1e6) / run.completed;
        side.rps.push(rps);
        side.cpu.push(cpuUs);
        console.log(
          `round ${round} ${side.label}: ${rps.toFixed(0)} req/s, ${cpuUs.toFixed(1)} µs/req`,
        );
        await sleep(500);
      }
    }
    for (const { label, dir, rps, cpu } of sides) {
      console.log(
        `${label} (${dir}): median ${median(rps).toFixed(0)} req/s, ${median(cpu).toFixed(1)} µs/req (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)})`,
      );
    }
  },
  teardown,
);
