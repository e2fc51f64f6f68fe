/**
 * System calls per proxied request, by call (`npx tsx bench/syscalls.ts`,
 * after `npm run build`): bare undici and the gateway are each started,
 * warmed up, then loaded for a fixed time with `strace -c -f` attached;
 * the counts are divided by the requests answered. For "where do the
 * gateway's extra socket writes come from": counts, not times, so strace's
 * own slowdown does not matter.
 */
import { execFile } from 'node:child_process';
import { comparedProxies, startBackends } from './backends.js';
import { positiveInt } from './env.js';
import { REQUEST_PATH } from './gateway-config.js';
import { drive } from './load.js';
import { createTeardown, PROJECT_ROOT, runMain, spawnNode, waitForPort } from './processes.js';

const SECONDS = positiveInt('BENCH_SECONDS', 5);
const teardown = createTeardown();

runMain(
  'syscalls',
  async () => {
    const backends = await startBackends(teardown);
    for (const proxy of await comparedProxies(backends)) {
      if (proxy.name === 'bare http-proxy-3') continue;
      const proc = spawnNode(proxy.name, proxy.nodeArgs, PROJECT_ROOT);
      await waitForPort(proc, proxy.port, 30_000);
      const target = {
        name: proxy.name,
        url: `http://127.0.0.1:${proxy.port}${REQUEST_PATH}`,
        connections: 50,
        headers: backends.headers,
      };
      await drive(target, { seconds: 3 });
      const strace = new Promise<string>((resolve) => {
        const child = execFile(
          'strace',
          ['-c', '-f', '-p', String(proc.pid)],
          { maxBuffer: 1 << 20 },
          (_err, _stdout, stderr) => resolve(stderr),
        );
        setTimeout(() => child.kill('SIGINT'), (SECONDS + 1) * 1000);
      });
      await new Promise((r) => setTimeout(r, 500));
      const run = await drive(target, { seconds: SECONDS });
      const report = await strace;
      console.log(`\n${proxy.name}: ${run.completed} requests`);
      for (const line of report.split('\n')) {
        const cells = line.trim().split(/\s+/);
        const calls = Number(cells[3]);
        const name = cells[cells.length - 1];
        if (!Number.isFinite(calls) || calls === 0 || name === 'total') continue;
        const perRequest = calls / run.completed;
        if (perRequest >= 0.01)
          console.log(`  ${name.padEnd(20)} ${perRequest.toFixed(2)} per request`);
      }
      await proc.stop();
    }
  },
  teardown,
);
