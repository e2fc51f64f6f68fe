/**
 * The log is written like nginx's `buffer=`/`flush=`: lines wait until
 * `log.buffer.bytes` have gathered or `flushMs` has passed, and nothing
 * waiting is lost when the process exits, crashes or logs `fatal`. Each case
 * runs the built logger in a child process writing to its real standard
 * output; a marker written straight to fd 1 shows what had been written by
 * then, and SIGKILL (no exit handler runs) shows what a flush must already
 * have saved.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';

const LOGGER = new URL('../../dist/ops/logger.js', import.meta.url).href;

beforeAll(() => {
  if (!existsSync(new URL(LOGGER)))
    throw new Error('dist/ops/logger.js is missing: run `npm run build` first');
});

/** Runs `body` with `log` (a logger on stdout with `buffer`) and `mark(text)`; resolves with stdout. */
async function run(buffer: { bytes: number; flushMs: number }, body: string): Promise<string> {
  const script = `
    import { writeSync } from 'node:fs';
    import { createLogger } from '${LOGGER}';
    const log = createLogger({ level: 'info', buffer: ${JSON.stringify(buffer)} });
    const mark = (text) => writeSync(1, text + '\\n');
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    ${body}
  `;
  const child = promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 10_000,
  });
  try {
    return (await child).stdout;
  } catch (err) {
    // SIGKILL'd on purpose: what it wrote is still the answer.
    const { stdout, signal } = err as { stdout?: string; signal?: string };
    if (signal !== 'SIGKILL' || stdout === undefined) throw err;
    return stdout;
  }
}

/** The messages and markers of the output, in order. */
function sequence(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => (line.startsWith('{') ? (JSON.parse(line) as { msg: string }).msg : line));
}

it('batches: lines wait for the buffer, then all come out before exit', async () => {
  const out = await run(
    { bytes: 65536, flushMs: 60_000 },
    `log.info('one'); log.info('two'); mark('MARK'); process.exit(0);`,
  );
  expect(sequence(out)).toEqual(['MARK', 'one', 'two']);
});

it('writes once the buffer holds `bytes`', async () => {
  const out = await run(
    { bytes: 1000, flushMs: 60_000 },
    `for (let i = 0; i < 4; i++) log.info('line ' + i + ' ' + 'x'.repeat(300)); mark('MARK'); process.exit(0);`,
  );
  const order = sequence(out).map((m) => m.split(' ').slice(0, 2).join(' '));
  // Each line is ~400 bytes: the third fills the buffer and the three go out; the fourth waits.
  expect(order).toEqual(['line 0', 'line 1', 'line 2', 'MARK', 'line 3']);
});

it('flushes after `flushMs` on its own', async () => {
  const out = await run(
    { bytes: 65536, flushMs: 50 },
    `log.info('waited'); await sleep(400); mark('MARK'); process.kill(process.pid, 'SIGKILL');`,
  );
  expect(sequence(out)).toEqual(['waited', 'MARK']);
});

it('a fatal line goes out at once, with every line before it', async () => {
  const out = await run(
    { bytes: 65536, flushMs: 60_000 },
    `log.info('before'); log.fatal('the end'); mark('MARK'); process.kill(process.pid, 'SIGKILL');`,
  );
  expect(sequence(out)).toEqual(['before', 'the end', 'MARK']);
});

it('a crash still writes what waited', async () => {
  const out = await run(
    { bytes: 65536, flushMs: 60_000 },
    `log.info('before the crash'); mark('MARK'); setTimeout(() => { throw new Error('boom'); }, 10);`,
  ).catch((err: { stdout?: string }) => err.stdout ?? '');
  expect(sequence(out)).toEqual(['MARK', 'before the crash']);
});

it('bytes 0 writes each line at once', async () => {
  const out = await run(
    { bytes: 0, flushMs: 1000 },
    `log.info('now'); mark('MARK'); process.kill(process.pid, 'SIGKILL');`,
  );
  expect(sequence(out)).toEqual(['now', 'MARK']);
});

it('a full non-blocking pipe loses nothing: every line arrives whole and in order', async () => {
  // Standard output made non-blocking (as a shared pipe can be) and not read
  // for a while: the writes meet EAGAIN, and batches larger than the pipe's
  // atomic write (4 KiB) are taken in part, and must be finished.
  const script = `
    import { createLogger } from '${LOGGER}';
    process.stdout._handle?.setBlocking?.(false);
    const log = createLogger({ level: 'info', buffer: { bytes: 65536, flushMs: 1000 } });
    for (let i = 0; i < 4000; i++) log.info({ i, pad: 'x'.repeat(500) }, 'line');
    log.info('last');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  expect(code).toBe(0);
  const lines = out.trim().split('\n');
  expect(lines).toHaveLength(4001);
  lines.slice(0, 4000).forEach((line, i) => expect((JSON.parse(line) as { i: number }).i).toBe(i));
  expect((JSON.parse(lines[4000] as string) as { msg: string }).msg).toBe('last');
});
