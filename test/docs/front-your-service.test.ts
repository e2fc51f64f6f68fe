/**
 * The README's "Front your service" does what it says, as a newcomer would
 * try it: its YAML blocks are run by the built gateway, its shell lines are
 * pasted into bash in order, and for forward-auth the nginx block of
 * docs/forward-auth.md runs in a real nginx, and its Caddy block in a real
 * Caddy. Only the ports are moved (to
 * free ones); a block that changes shape fails here instead of in a reader's
 * terminal.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { startCaddy, type TestCaddy } from '../support/caddy.js';
import { startNginx, type TestNginx } from '../support/nginx.js';
import { findFreeServerPort } from '../support/ports.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';
import { blocks, section } from '../support/markdown.js';

const ROOT = new URL('../../', import.meta.url);
const README = readFileSync(new URL('README.md', ROOT), 'utf8');
const FORWARD_AUTH = readFileSync(new URL('docs/forward-auth.md', ROOT), 'utf8');
const DEMO_SEED = readFileSync(new URL('config/demo-seed.yaml', ROOT), 'utf8');

const front = section(README, 'Front your service');
const [proxyYaml, forwardAuthYaml] = blocks(front, 'yaml');
const [shell] = blocks(front, 'sh');
const [nginxBlock] = blocks(section(FORWARD_AUTH, 'nginx (`auth_request`)'), 'nginx');
const [caddyBlock] = blocks(section(FORWARD_AUTH, 'Caddy (`forward_auth`)'), 'caddy');

/** The README's config on a free port (the test reads it back from the log). */
function onFreePort(yaml: string): string {
  expect(yaml).toContain('port: 8080');
  return yaml.replace('port: 8080', 'port: 0');
}

/** The README's curl lines (not the serve line: the test runs the gateway), pointed at `origin`. */
function curlLines(origin: string): string[] {
  const lines = (shell as string).trim().split('\n');
  expect(lines[0]).toMatch(/node dist\/cli\.js serve --config front\.yaml &$/);
  const curls = lines.slice(1);
  expect(curls).toHaveLength(3);
  return curls.map((line) => line.replaceAll('http://127.0.0.1:8080', origin));
}

/**
 * Pastes the lines into one bash, in order; resolves with each line's output.
 * Asynchronously: the echo upstream runs in this process and must answer.
 */
async function paste(lines: string[]): Promise<string[]> {
  const script = lines.map((line) => `${line}\necho; echo '--- next ---'`).join('\n');
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { timeout: 30_000 });
  return stdout.split('--- next ---\n');
}

let gateway: GatewayProcess | undefined;
let nginx: TestNginx | undefined;
let caddy: TestCaddy | undefined;
let upstream: CountingUpstream | undefined;

afterEach(async () => {
  await nginx?.stop();
  await caddy?.stop();
  await gateway?.kill();
  await upstream?.close();
  [gateway, nginx, caddy, upstream] = [undefined, undefined, undefined, undefined];
});

describe('README: Front your service', () => {
  it('the route: 200 at the service with identity headers for acme, 403 for globex', async () => {
    // "No service at hand? Add `demo: …` to the file": the README's own line.
    const demoLine = /`(demo: \{ echoUpstream: \{ port: 9001 \} \})`/.exec(front)?.[1];
    expect(demoLine).toBeDefined();
    const echoPort = await findFreeServerPort();
    const config = `${onFreePort(proxyYaml as string)}${(demoLine as string).replace('9001', String(echoPort))}\n`;
    gateway = await startGatewayProcess(
      config.replace('http://127.0.0.1:9001', `http://127.0.0.1:${echoPort}`),
      { files: { 'config/demo-seed.yaml': DEMO_SEED } },
    );

    const [, proxied, mismatch] = await paste(curlLines(gateway.url));
    const echo = JSON.parse(proxied as string) as { path: string; headers: Record<string, string> };
    expect(echo.path).toBe('/orders/acme/42');
    expect(echo.headers['x-tenant-id']).toBe('acme');
    expect(echo.headers['x-user-email']).toBe('alice@example.com');
    expect(echo.headers['x-user-id']).toMatch(/\S/);
    expect(echo.headers.authorization).toBeUndefined();
    expect(mismatch).toMatch(/^HTTP\/1\.1 403 /);
    expect(mismatch).toContain('"tenant_mismatch"');
  }, 60_000);

  it('behind nginx: the same lines through nginx give 200 at the service and 403', async () => {
    const block = await startForwardAuthGateway(nginxBlock as string);
    nginx = await startNginx(block);

    const [, proxied, mismatch] = await paste(curlLines(`http://127.0.0.1:${nginx.port}`));
    expectAliceAtAcme(proxied as string);
    // auth_request relays the verdict's status, not its body: nginx writes its own page.
    expect(mismatch).toMatch(/^HTTP\/1\.1 403 /);
    expect(upstream?.requests.map((r) => r.url)).toEqual(['/orders/acme/42']);
  }, 60_000);

  it("behind Caddy: the same lines give 200 at the service, the gateway's own 403, and no spoofing", async () => {
    caddy = await startCaddy(await startForwardAuthGateway(caddyBlock as string));
    const origin = `http://127.0.0.1:${caddy.port}`;

    const [, proxied, mismatch] = await paste(curlLines(origin));
    expect(expectAliceAtAcme(proxied as string).authorization).toBeUndefined();
    // Caddy relays the verdict as it is: the gateway's JSON.
    expect(mismatch).toMatch(/^HTTP\/1\.1 403 /);
    expect(mismatch).toContain('"tenant_mismatch"');

    // A client's own identity headers and forward-auth headers change nothing.
    // The README's TOKEN line, through the proxy in front.
    const { access_token: token } = await tokenFor(origin, ALICE, 'acme');
    const spoofed = await fetch(`${origin}/orders/acme/7`, {
      headers: {
        authorization: `Bearer ${token}`,
        'x-tenant-id': 'globex',
        'x-user-email': 'mallory@example.com',
        'x-forwarded-uri': '/orders/globex/7',
        'x-forwarded-method': 'DELETE',
      },
    });
    expect(spoofed.status).toBe(200);
    const seen = (await spoofed.json()) as { headers: Record<string, string> };
    expect(seen.headers['x-tenant-id']).toBe('acme');
    expect(seen.headers['x-user-email']).toBe('alice@example.com');
    const hidden = await fetch(`${origin}/orders/globex/7`, {
      headers: { authorization: `Bearer ${token}`, 'x-forwarded-uri': '/orders/acme/7' },
    });
    expect(hidden.status).toBe(403);
    expect(upstream?.requests.map((r) => r.url)).toEqual(['/orders/acme/42', '/orders/acme/7']);
  }, 60_000);
});

/**
 * The README's forward-auth config in a gateway on a free port and an echo
 * service; resolves with the proxy's block pointed at both.
 */
async function startForwardAuthGateway(block: string): Promise<string> {
  upstream = await startEchoUpstream();
  gateway = await startGatewayProcess(onFreePort(forwardAuthYaml as string), {
    files: { 'config/demo-seed.yaml': DEMO_SEED },
  });
  return block
    .replaceAll('127.0.0.1:8080', gateway.url.replace('http://', ''))
    .replaceAll('127.0.0.1:9001', upstream.url.replace('http://', ''));
}

/** The echo of the README's 200 line behind a proxy: Alice at acme, all four identity headers. */
function expectAliceAtAcme(proxied: string): Record<string, string> {
  const echo = JSON.parse(proxied) as { url: string; headers: Record<string, string> };
  expect(echo.url).toBe('/orders/acme/42');
  expect(echo.headers['x-tenant-id']).toBe('acme');
  expect(echo.headers['x-tenant-type']).toBe('orgtenant');
  expect(echo.headers['x-user-email']).toBe('alice@example.com');
  expect(echo.headers['x-user-id']).toMatch(/\S/);
  return echo.headers;
}
