/**
 * Issue 42, finding 11: `serve`'s banner names the address it actually
 * bound. The built CLI is run on a config that binds every interface
 * (`0.0.0.0`, as `serve` without a config does) and on one that binds
 * loopback: the first says `0.0.0.0:PORT`, that it is reachable from other
 * machines, and gives a URL that works pasted from this machine (for the
 * admin listener too); the second prints the loopback URL, as before.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../support/gateway-process.js';

const dir = mkdtempSync(join(tmpdir(), 'tg-banner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `serve` on `config` until its banner's health line; `check` of the banner while it runs, then SIGTERM. */
async function withBanner(
  name: string,
  config: string,
  check: (text: string) => Promise<void>,
): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, config);
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  try {
    const text = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner:\n${stderr}`)), 15_000);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/^health and metrics: .*\n/m.test(stderr)) {
          clearTimeout(timer);
          resolve(stderr);
        }
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${stderr}`)));
    });
    await check(text);
  } finally {
    child.kill('SIGTERM');
  }
}

describe('serve', () => {
  it('bound to every interface: says 0.0.0.0:PORT and gives a URL that works from here', async () => {
    const config = 'listen: { host: 0.0.0.0, port: 0 }\nadmin: { host: 0.0.0.0, port: 0 }\n';
    await withBanner('everywhere', config, async (text) => {
      const main =
        /^tenant-gateway listening on 0\.0\.0\.0:(\d+) \(every network interface: reachable from other machines\); from this machine: (http:\/\/127\.0\.0\.1:(\d+))$/m.exec(
          text,
        );
      expect(main, text).not.toBeNull();
      const [, boundPort, url, urlPort] = main as unknown as [string, string, string, string];
      expect(urlPort).toBe(boundPort);
      const ops =
        /^health and metrics: (http:\/\/127\.0\.0\.1:\d+)\/healthz, .*\(the admin listener, bound to every network interface\)$/m.exec(
          text,
        );
      expect(ops, text).not.toBeNull();
      // Pasteable: both URLs answer from this machine.
      expect((await fetch(`${url}/.well-known/jwks.json`)).status).toBe(200);
      expect((await fetch(`${(ops as RegExpExecArray)[1] as string}/healthz`)).status).toBe(200);
    });
  });

  it('bound to loopback: the loopback URL, as before', async () => {
    await withBanner(
      'loopback',
      'listen: { host: 127.0.0.1, port: 0 }\nadmin: { host: 127.0.0.1, port: 0 }\n',
      async (text) => {
        const main = /^tenant-gateway listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(text);
        expect(main, text).not.toBeNull();
        expect(text).not.toContain('every network interface');
        expect(
          (await fetch(`${(main as RegExpExecArray)[1] as string}/.well-known/jwks.json`)).status,
        ).toBe(200);
      },
    );
  });
});
