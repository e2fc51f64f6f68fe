/**
 * docs/tenant-identity-providers.md walks a tenant from the IdP's console to a
 * signed-in user (issue 42): for Okta, Entra ID, Google and Keycloak the
 * callback to register is the gateway's own, the scopes are the ones the
 * gateway asks for, the sealing key is made for the config key that reads it,
 * and the IdP is set with its client secret read from standard input — the
 * page's commands run in a real bash with real openssl, jq and curl, the
 * secret never on a command line.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { SSO_CALLBACK_PATH } from '../../src/api/identity/sso-routes.js';
import { sso } from '../../src/config/schema/sso.js';

const ROOT = new URL('../../', import.meta.url);
const PAGE = readFileSync(new URL('docs/tenant-identity-providers.md', ROOT), 'utf8');
const SIGN_IN_SOURCE = readFileSync(
  new URL('src/auth/federation/browser-sign-in.ts', ROOT),
  'utf8',
);

/** The text from a heading of `level` to the next heading of that level or higher. */
function section(markdown: string, heading: string, level = 2): string {
  const marks = '#'.repeat(level);
  const start = markdown.indexOf(`\n${marks} ${heading}`);
  if (start < 0) throw new Error(`no section "${marks} ${heading}"`);
  const next = markdown.slice(start + 1).search(new RegExp(`\\n#{1,${level}} `));
  return markdown.slice(start, next < 0 ? undefined : start + 1 + next);
}

/** The fenced code blocks of one language (or of any, with `\\w*`), in order. */
function blocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map(
    (m) => m[1] as string,
  );
}

interface Recorded {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

let cwd: string | undefined;
let server: Server | undefined;

afterEach(async () => {
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
  await new Promise((done) => (server === undefined ? done(undefined) : server.close(done)));
  [cwd, server] = [undefined, undefined];
});

/** An HTTP server that records what it is sent and answers 200 `{}`. */
async function recorder(): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ready) => server?.listen(0, '127.0.0.1', ready));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function bash(script: string, input: string, env: Record<string, string> = {}) {
  cwd = mkdtempSync(join(tmpdir(), 'idp-doc-'));
  const run = promisify(execFile)('bash', ['-c', script], {
    cwd,
    timeout: 30_000,
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
  run.child.stdin?.end(input);
  return run;
}

describe('docs/tenant-identity-providers.md, step by step', () => {
  const steps = () => section(PAGE, 'Step by step');

  it.each([
    ['Okta', /https:\/\/<org>\.okta\.com(\/oauth2\/default)?/],
    ['Microsoft Entra ID', /https:\/\/login\.microsoftonline\.com\/<tenant-id>\/v2\.0/],
    ['Google', /https:\/\/accounts\.google\.com/],
    ['Keycloak', /https:\/\/<host>\/realms\/<realm>/],
  ])('%s: the web app, the callback to register, the issuer, id and secret', (idp, issuer) => {
    const part = section(steps(), idp, 4);
    expect(part).toContain(`https://gw.example.com${SSO_CALLBACK_PATH}`);
    expect(part).toMatch(issuer);
    expect(part).toMatch(/client id/i);
    expect(part).toMatch(/client secret/i);
    expect(part).toMatch(/web\s+application|confidential|\*\*web\*\*/i);
  });

  it('registers the callback and the scopes the gateway itself sends', () => {
    const scope = /scope: '([^']+)'/.exec(SIGN_IN_SOURCE)?.[1];
    expect(scope).toBe('openid email profile');
    const register = section(steps(), '2. Register the gateway at the IdP', 3);
    expect(register).toContain(`\`<publicUrl>${SSO_CALLBACK_PATH}\``);
    expect(register).toContain(`\`${scope}\``);
  });

  it('verifies the domain by its DNS challenge before the IdP is set', () => {
    const verify = section(steps(), "3. Verify the tenant's e-mail domains", 3);
    const [ask, check] = blocks(verify, 'sh');
    expect(ask).toMatch(/-d '\{"domain":"acme\.example"\}' "\$GW\/1\/tenants\/acme\/domains"/);
    expect(check).toContain('-X POST');
    expect(check).toContain('"$GW/1/tenants/acme/domains/acme.example/verify"');
    expect(verify).toMatch(/`txt_name`[\s\S]*`txt_value`/);
    expect(verify).toContain('tenant domain add acme acme.example --verified');
  });

  it('makes the sealing key for the config key that reads it: 32 random bytes in base64', async () => {
    const config = parse(
      blocks(section(steps(), "1. The operator's side, once", 3), 'yaml')[0] as string,
    ) as {
      sso: { secretsKeyFile: string };
    };
    const keyFile = config.sso.secretsKeyFile;
    expect(sso.safeParse({ secretsKeyFile: keyFile }).success).toBe(true);
    const command = blocks(section(steps(), "1. The operator's side, once", 3), 'sh')[0] as string;
    expect(command).toContain(`openssl rand -base64 32 > ${keyFile.replace(/^\.\//, '')}`);

    await bash(command, '');
    const key = readFileSync(join(cwd as string, keyFile), 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
  });

  it('sets the IdP with its client secret read from stdin, sent in the JSON body only', async () => {
    const put = blocks(
      section(steps(), "4. Set the tenant's identity provider", 3),
      'sh',
    )[0] as string;
    const gateway = await recorder();
    const secret = `s3cr"et\\ with $HOME and 'quotes'`;
    const script = `GW=${gateway.url}\n${put}`;

    await bash(script, `${secret}\n`, { ADMIN_TOKEN: 'admin-token-1' });

    expect(gateway.requests).toHaveLength(1);
    const [request] = gateway.requests as [Recorded];
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('/1/tenants/acme/idp');
    expect(request.headers.authorization).toBe('Bearer admin-token-1');
    expect(request.headers['content-type']).toBe('application/json');
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(body['client_secret']).toBe(secret);
    expect(body['domains']).toEqual(['acme.example']);
    expect(Object.keys(body).sort()).toEqual(
      ['client_id', 'client_secret', 'domains', 'issuer', 'link_existing', 'role'].sort(),
    );
  });

  it('never puts a client secret on a command line', () => {
    const commands = [...blocks(PAGE, 'sh'), ...blocks(PAGE, 'console')].join('\n');
    expect(commands).not.toMatch(/client_secret=/);
    expect(commands).not.toMatch(/--client-secret(?!-stdin)/);
    expect(PAGE).not.toMatch(/--client-secret(?![-\w])/);
  });
});
