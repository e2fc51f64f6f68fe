/**
 * A gateway started in a process of its own, for failed-start.redis.test.ts:
 * the built one (`dist/`, as `serve` runs it; `npm run build` first). `TG_CONFIG` is the raw config (JSON),
 * `TG_FAIL_AT` the named step that throws (empty: none). Prints `step <name>`
 * before each step, then `started` (and closes the gateway) or `start failed:
 * <message>`; then it waits for its stdin to end, so the test can look at the
 * ports, at Redis and at its thread count while it still runs; it must then
 * exit on its own (a socket or connection left open would keep it alive).
 */
import { readdirSync } from 'node:fs';
import module from 'node:module';

// As dist/cli.js does, before the gateway's modules load: V8's compile cache
// where Node has it (22.1+), so the suite's many children compile them once.
module.enableCompileCache?.();
const { default: pino } = await import('pino');
const { validateConfig } = await import('../../dist/config/index.js');
const { createGateway } = await import('../../dist/gateway.js');

/** @type {Record<string, unknown>} */
const raw = JSON.parse(process.env['TG_CONFIG'] ?? '{}');
const failAt = process.env['TG_FAIL_AT'] ?? '';

async function main() {
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
    process.stdout.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
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
