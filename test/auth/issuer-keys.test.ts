/**
 * A provider's discovery document and keys (`auth/federation/issuer-keys.ts`,
 * `https-json.ts`) against a hand-written HTTPS server with a test CA: the
 * discovery `issuer` must be the configured one exactly, HTTPS only, no
 * redirect followed, bounded answers, a deadline, one fetch for concurrent
 * callers, failures not cached, at most `maxProviders` issuers kept.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderHttp, type ProviderHttp } from '../../src/auth/federation/https-json.js';
import { createIssuerKeys, type IssuerKeysOptions } from '../../src/auth/federation/issuer-keys.js';
import { makeTestCa, type TestCa } from '../support/oidc-idp.js';

let ca: TestCa;
let server: Server;
let base: string;
let http: ProviderHttp;
/** Requests by path. */
const hits = new Map<string, number>();
let jwks: unknown;

/** `/<name>/.well-known/openid-configuration` answers per name; `/jwks` the key set. */
const routes: Record<string, (res: ServerResponse, issuer: string) => void> = {
  good: (res, issuer) => json(res, { issuer, jwks_uri: `${base}/jwks` }),
  slash: (res, issuer) => json(res, { issuer: `${issuer}/`, jwks_uri: `${base}/jwks` }),
  plainjwks: (res, issuer) => json(res, { issuer, jwks_uri: `http://127.0.0.1/jwks` }),
  redirect: (res) =>
    res.writeHead(302, { location: `${base}/good/.well-known/openid-configuration` }).end(),
  huge: (res, issuer) => json(res, { issuer, jwks_uri: `${base}/jwks`, pad: 'x'.repeat(600_000) }),
  silent: () => {},
  broken: (res) => res.writeHead(500).end(),
};

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  if (path === '/jwks') return json(res, jwks);
  const name = path.split('/')[1] ?? '';
  const route = routes[name];
  if (route === undefined || !path.endsWith('/.well-known/openid-configuration'))
    return void res.writeHead(404).end();
  route(res, `${base}/${name}`);
}

beforeAll(async () => {
  ca = makeTestCa();
  server = createServer({ cert: ca.cert, key: ca.key }, handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://localhost:${(server.address() as AddressInfo).port}`;
  const { publicKey } = await generateKeyPair('ES256');
  jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  http = createProviderHttp({ caFile: ca.caFile, timeoutMs: 500 });
}, 30_000);

afterAll(async () => {
  await http?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  ca?.close();
});

const keysWith = (options: Partial<IssuerKeysOptions> = {}) =>
  createIssuerKeys({
    http,
    timeoutMs: 500,
    keysMaxAgeMs: 60_000,
    unknownKeyCooldownMs: 30_000,
    maxProviders: 10,
    ...options,
  });

const discoveries = (name: string) => hits.get(`/${name}/.well-known/openid-configuration`) ?? 0;

describe('issuer keys', () => {
  it('discovers once for concurrent callers and reads the keys', async () => {
    const keys = keysWith();
    const before = discoveries('good');
    const [a, b] = await Promise.all([keys.keysFor(`${base}/good`), keys.keysFor(`${base}/good`)]);
    expect(a).toBe(b);
    expect(discoveries('good') - before).toBe(1);
    await expect(
      a({ alg: 'ES256', kid: 'k1' }, { payload: '', signature: '' } as never),
    ).resolves.toBeDefined();
  });

  it('refuses a discovery document whose issuer is not the configured one exactly', async () => {
    await expect(keysWith().keysFor(`${base}/slash`)).rejects.toThrow(/issuer/);
  });

  it('refuses plain http: an issuer, and a jwks_uri', async () => {
    await expect(keysWith().keysFor(`http://localhost:1/good`)).rejects.toThrow(/https/);
    await expect(keysWith().keysFor(`${base}/plainjwks`)).rejects.toThrow(/https/);
  });

  it('follows no redirect, bounds the answer and the wait', async () => {
    const good = discoveries('good');
    await expect(keysWith().keysFor(`${base}/redirect`)).rejects.toThrow(/302/);
    expect(discoveries('good')).toBe(good);
    await expect(keysWith().keysFor(`${base}/huge`)).rejects.toThrow(/bytes/);
    const started = Date.now();
    await expect(keysWith().keysFor(`${base}/silent`)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('does not cache a failure', async () => {
    const keys = keysWith();
    const before = discoveries('broken');
    await expect(keys.keysFor(`${base}/broken`)).rejects.toThrow(/500/);
    await expect(keys.keysFor(`${base}/broken`)).rejects.toThrow(/500/);
    expect(discoveries('broken') - before).toBe(2);
  });

  it('keeps at most maxProviders issuers', async () => {
    routes['other'] = routes['good'] as (typeof routes)['good'];
    const keys = keysWith({ maxProviders: 1 });
    const before = discoveries('good');
    await keys.keysFor(`${base}/good`);
    await keys.keysFor(`${base}/good`);
    expect(discoveries('good') - before).toBe(1);
    await keys.keysFor(`${base}/other`);
    await keys.keysFor(`${base}/good`);
    expect(discoveries('good') - before).toBe(2);
  });
});
