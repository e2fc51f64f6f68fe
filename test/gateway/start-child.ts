/**
 * A gateway started in a process of its own, for failed-start.redis.test.ts
 * (run with `node --import tsx`). `TG_CONFIG` is the raw config (JSON),
 * `TG_FAIL_AT` the named step that throws (empty: none). Prints `step <name>`
 * before each step, then `started` (and closes the gateway) or `start failed:
 * <message>`; then it waits for its stdin to end, so the test can look at the
 * ports and at Redis while it still runs, and must then exit on its own: a
 * socket, timer, thread or connection left open would keep it alive.
 */
import { readdirSync } from 'node:fs';
import pino from 'pino';
import { validateConfig } from '../../src/config/index.js';
import { createGateway } from '../../src/gateway.js';

const raw = JSON.parse(process.env['TG_CONFIG'] ?? '{}') as Record<string, unknown>;
const failAt = process.env['TG_FAIL_AT'] ?? '';

async function main(): Promise<void> {
  const config = validateConfig(raw, process.cwd(), 'test');
  try {
    const gateway = await createGateway(config, pino({ level: 'silent' }), {
      beforeStep(name) {
        process.stdout.write(`step ${name}\n`);
        if (name === failAt) throw new Error(`fault injected at ${name}`);
      },
    });
    await gateway.listen();
    process.stdout.write('started\n');
    await gateway.close();
  } catch (err) {
    process.stdout.write(`start failed: ${(err as Error).message}\n`);
    process.exitCode = 3;
  }
  // Threads of this process once the failed start has settled: a worker left running is one more.
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.stdout.write(`threads ${readdirSync('/proc/self/task').length}\n`);
  process.stdout.write('waiting\n');
  process.stdin.resume();
  process.stdin.once('end', () => {
    // Diagnostics, should the process not exit: what still holds it.
    setTimeout(() => {
      process.stderr.write(`still open: ${process.getActiveResourcesInfo().join(', ')}\n`);
    }, 1000).unref();
  });
}

void main();
