/**
 * `log.pretty` is for a terminal: pino-pretty turns a line's escapes back
 * into the characters a client sent (U+2028, C1 controls such as CSI, ESC),
 * so what it prints must be escaped again — values readable, nothing for the
 * terminal to act on. The built logger runs in a child process writing to
 * its real standard output.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';

const DIST = new URL('../../dist/ops/', import.meta.url);

beforeAll(() => {
  if (!existsSync(new URL('logger.js', DIST)))
    throw new Error('dist/ops/logger.js is missing: run `npm run build` first');
});

it('prints what a client sent with every control character escaped, line feeds its own', async () => {
  const forged = 'x\u2028{event:forged}\u2029\u0085\u009b[2J\u001b[31m';
  const script = `
    import { createLogger } from '${new URL('logger.js', DIST).href}';
    import { createAccessLog } from '${new URL('access-log.js', DIST).href}';
    const log = createLogger({ level: 'info', pretty: true });
    const forged = ${JSON.stringify(forged)};
    log.info({ audit: { user_email: forged } }, 'audit');
    createAccessLog(log).write('info', {
      req: { method: 'GET', headers: { 'user-agent': forged } },
      url: '/x',
      scope: { requestId: 'r-1', route: '/x' },
      settled: { status: 200, outcome: 'accepted', reason: '' },
      durationMs: 1, bytesIn: 0, bytesOut: 0, clientIp: '127.0.0.1', original: undefined,
    });
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    { timeout: 10_000 },
  );
  expect(stdout).toContain('INFO');
  expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  const escaped = 'x\\u2028{event:forged}\\u2029\\u0085\\u009b[2J\\u001b[31m';
  // Once in the audit event, once as the user agent.
  expect(stdout.split(escaped)).toHaveLength(3);
});
