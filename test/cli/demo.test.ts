/**
 * Issue 15: `npm start`'s demo shows the proxy at work. The built gateway is
 * run on config/gateway.yaml exactly as `npm start` runs it (on free ports
 * through the variables the file reads), and the curl lines it prints are
 * pasted into bash in order, as a newcomer would.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findFreeServerPort } from '../support/ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm start (config/gateway.yaml)', () => {
  it('prints curl lines that work pasted in order: 200 with identity headers, 403, 401', async () => {
    const [port, echoPort] = [await findFreeServerPort(), await findFreeServerPort()];
    const child = spawn(
      process.execPath,
      ['dist/cli.js', 'serve', '--config', 'config/gateway.yaml'],
      {
        cwd: ROOT,
        env: { ...process.env, LISTEN_PORT: String(port), DEMO_UPSTREAM_PORT: String(echoPort) },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    try {
      let stderr = '';
      const banner = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no demo lines:\n${stderr}`)), 15_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/curl -s -i http\S+ {3}# 401[^\n]*\n/.test(stderr)) {
            clearTimeout(timer);
            resolve(stderr);
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${stderr}`)));
      });
      const lines = banner
        .split('\n')
        .filter((line) => line.startsWith('TOKEN=') || line.startsWith('curl '));
      expect(lines).toHaveLength(4);
      // One shell, the lines in order, a marker after each to split the outputs.
      const script = lines.map((line) => `${line}\necho; echo '--- next ---'`).join('\n');
      const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
      expect(run.status).toBe(0);
      const [, proxied, mismatch, anonymous] = run.stdout.split('--- next ---\n');

      const echo = JSON.parse(proxied as string) as { headers: Record<string, string> };
      expect(echo.headers['x-tenant-id']).toBe('acme');
      expect(echo.headers['x-tenant-type']).toBe('orgtenant');
      expect(echo.headers['x-user-email']).toBe('alice@example.com');
      expect(echo.headers['x-user-id']).not.toBe('spoofed');
      expect(echo.headers['x-user-id']).toMatch(/\S/);
      expect(mismatch).toMatch(/^HTTP\/1\.1 403 /);
      expect(mismatch).toContain('"tenant_mismatch"');
      expect(anonymous).toMatch(/^HTTP\/1\.1 401 /);
      expect(anonymous).toContain('"invalid_token"');

      // Health and metrics: where the banner says, on loopback, never on the public listener.
      const admin = /^health and metrics: (http:\/\/127\.0\.0\.1:\d+)\/healthz, /m.exec(
        banner,
      )?.[1];
      expect(admin, banner).toBeDefined();
      expect((await fetch(`${admin as string}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${admin as string}/metrics`)).text()).toContain(
        'tenant_gateway_build_info',
      );
      for (const path of ['/healthz', '/readyz', '/metrics'])
        expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
