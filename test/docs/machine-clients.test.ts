/**
 * docs/machine-clients.md does what it says, as a newcomer would try it
 * (issue 42): its first section runs on the embedded in-memory store with
 * the demo users — its YAML by the built gateway, its shell lines pasted
 * into bash in order — and every scope the page gives a client or asks for
 * is one its own config allows a machine client.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { findFreeServerPort } from '../support/ports.js';
import { blocks, section } from '../support/markdown.js';

const ROOT = new URL('../../', import.meta.url);
const PAGE = readFileSync(new URL('docs/machine-clients.md', ROOT), 'utf8');
const DEMO_SEED = readFileSync(new URL('config/demo-seed.yaml', ROOT), 'utf8');

let gateway: GatewayProcess | undefined;
let cwd: string | undefined;

afterEach(async () => {
  await gateway?.kill();
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
  [gateway, cwd] = [undefined, undefined];
});

describe('docs/machine-clients.md', () => {
  it('begins with the demo: no command before it', () => {
    const firstSection = PAGE.indexOf('\n## ');
    expect(PAGE.indexOf('\n## Try it on the demo\n')).toBe(firstSection);
    expect(PAGE.slice(0, firstSection)).not.toContain('```');
  });

  it('the demo on the in-memory store: a client made by acme’s admin reads, and may not write', async () => {
    const demo = section(PAGE, 'Try it on the demo');
    const [demoYaml] = blocks(demo, 'yaml');
    const [demoShell] = blocks(demo, 'sh');
    expect(demoYaml).toContain('port: 8080');
    expect(demoYaml).not.toMatch(/^store:/m);
    const echoPort = await findFreeServerPort();
    const config = (demoYaml as string)
      .replace('port: 8080', 'port: 0')
      .replaceAll('9001', String(echoPort));
    gateway = await startGatewayProcess(config, {
      files: { 'config/demo-seed.yaml': DEMO_SEED },
    });

    const lines = (demoShell as string).trim().split('\n');
    expect(lines[0]).toMatch(/node dist\/cli\.js serve --config clients\.yaml &$/);
    const pasted = lines
      .slice(1)
      .map((line) => line.replaceAll('http://127.0.0.1:8080', (gateway as GatewayProcess).url));
    expect(pasted).toHaveLength(6);
    cwd = mkdtempSync(join(tmpdir(), 'machine-clients-doc-'));
    const script = pasted.map((line) => `${line}\necho; echo '--- next ---'`).join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      cwd,
      timeout: 30_000,
    });
    const outputs = stdout.split('--- next ---\n');

    const client = JSON.parse(readFileSync(join(cwd, 'client.json'), 'utf8')) as {
      client_id: string;
      client_secret: string;
      scopes: string[];
    };
    expect(client.client_id).toMatch(/^tgc_/);
    expect(client.scopes).toEqual(['orders:read']);
    const echo = JSON.parse(outputs[4] as string) as {
      path: string;
      headers: Record<string, string>;
    };
    expect(echo.path).toBe('/orders/list');
    expect(echo.headers['x-client-id']).toBe(client.client_id);
    expect(echo.headers['x-scope']).toBe('orders:read');
    expect(echo.headers['x-tenant-id']).toBe('acme');
    expect(echo.headers['x-user-id']).toBeUndefined();
    expect(outputs[5]).toMatch(/^HTTP\/1\.1 403 /);
    expect(outputs[5]).toContain('"insufficient_scope"');
    // The secret went through files, never a command line of the page.
    expect(demoShell).not.toContain(client.client_secret);
  }, 60_000);

  it('gives clients only scopes its own config allows them', () => {
    const configs = blocks(PAGE, 'yaml')
      .map((text) => parse(text) as { authorization?: { clientScopes?: string[] } })
      .filter((config) => config.authorization !== undefined);
    expect(configs.length).toBeGreaterThan(0);
    const allowed = configs[0]?.authorization?.clientScopes ?? [];
    expect(allowed.length).toBeGreaterThan(0);
    for (const config of configs) expect(config.authorization?.clientScopes).toEqual(allowed);

    const code = blocks(PAGE, '\\w*').join('\n');
    const given = [
      ...[...code.matchAll(/--scopes ([^\s\\]+)/g)].flatMap((m) => (m[1] as string).split(',')),
      ...[...code.matchAll(/"scopes":\s*\[([^\]]*)\]/g)].flatMap((m) =>
        [...(m[1] as string).matchAll(/"([^"]+)"/g)].map((s) => s[1] as string),
      ),
      ...[...code.matchAll(/\bscope[=:]\s*['"]?([\w:.-]+)/g)].map((m) => m[1] as string),
    ];
    expect(given.length).toBeGreaterThan(3);
    expect(given.filter((scope) => !allowed.includes(scope))).toEqual([]);
  });
});
