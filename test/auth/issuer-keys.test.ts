/**
 * A provider's discovery document and keys (`auth/federation/issuer-keys.ts`,
 * `provider-discovery.ts`, `https-json.ts`) against a hand-written HTTPS
 * server with a test CA: the discovery `issuer` must be the configured one
 * exactly, HTTPS only, the authorization endpoint on the issuer's origin, no
 * redirect followed, bounded answers, a deadline, one fetch for concurrent
 * callers, failures cached `sso.failureCacheSeconds` (issue 42), at most
 * `maxProviders` issuers kept. The server is on loopback: these fetchers allow
 * private addresses, except where the address rule is what is tested.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProviderHttp,
  type ProviderHttp,
  type ProviderHttpOptions,
} from '../../src/auth/federation/https-json.js';
import { createIssuerKeys, type IssuerKeysOptions } from '../../src/auth/federation/issuer-keys.js';
import { createProviderDiscovery } from '../../src/auth/federation/provider-discovery.js';
import type { LookupFunction } from '../../src/auth/federation/public-addresses.js';
import { makeTestCa, type TestCa } from '../support/oidc-idp.js';

let ca: TestCa;
let server: Server;
let base: string;
let http: ProviderHttp;
/** Requests by path. */
const hits = new Map<string, number>();
let jwks: unknown;
/** What `/jwks` answers: the key set, or a failure. */
let jwksStatus = 200;

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
  elsewhere: (res, issuer) =>
    json(res, {
      issuer,
      jwks_uri: `${base}/jwks`,
      authorization_endpoint: 'https://login.attacker.example/authorize',
      token_endpoint: `${base}/token`,
    }),
  logoutelsewhere: (res, issuer) =>
    json(res, {
      issuer,
      jwks_uri: `${base}/jwks`,
      end_session_endpoint: 'https://logout.attacker.example/end',
    }),
  logoutplain: (res, issuer) =>
    json(res, { issuer, jwks_uri: `${base}/jwks`, end_session_endpoint: `http://127.0.0.1/end` }),
  logouthere: (res, issuer) =>
    json(res, { issuer, jwks_uri: `${base}/jwks`, end_session_endpoint: `${base}/end` }),
  sameorigin: (res, issuer) =>
    json(res, {
      issuer,
      jwks_uri: `${base}/jwks`,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
    }),
};

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  if (path === '/jwks') return jwksStatus === 200 ? json(res, jwks) : void res.writeHead(500).end();
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
  // No failure cache on the shared fetcher: one slow answer on a busy machine must not fail the
  // suites after it (the cache has its own tests below, each with a fetcher of its own).
  http = httpWith({ failureCacheMs: 0 });
}, 30_000);

const opened: ProviderHttp[] = [];

function httpWith(options: Partial<ProviderHttpOptions>): ProviderHttp {
  const made = createProviderHttp({
    caFile: ca.caFile,
    timeoutMs: 2_000,
    allowPrivateAddresses: true,
    failureCacheMs: 60_000,
    ...options,
  });
  opened.push(made);
  return made;
}

afterAll(async () => {
  await Promise.all(opened.map((made) => made.close()));
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  ca?.close();
});

const keysWith = (options: Partial<IssuerKeysOptions> & { failureCacheMs?: number } = {}) => {
  const using = options.http ?? http;
  const maxProviders = options.maxProviders ?? 10;
  return createIssuerKeys({
    http: using,
    discovery: createProviderDiscovery({
      http: using,
      maxAgeMs: 60_000,
      failureCacheMs: options.failureCacheMs ?? 0,
      maxProviders,
    }),
    timeoutMs: 2_000,
    keysMaxAgeMs: 60_000,
    unknownKeyCooldownMs: 30_000,
    maxProviders,
    ...options,
  });
};

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
    const impatient = httpWith({ timeoutMs: 500, failureCacheMs: 0 });
    await expect(keysWith({ http: impatient }).keysFor(`${base}/silent`)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('caches a failure for failureCacheMs: one request, however many callers (issue 42)', async () => {
    const keys = keysWith({ http: httpWith({ failureCacheMs: 60_000 }), failureCacheMs: 60_000 });
    const before = discoveries('broken');
    for (let i = 0; i < 20; i++)
      await expect(keys.keysFor(`${base}/broken`)).rejects.toThrow(/500/);
    expect(discoveries('broken') - before).toBe(1);
    // A fresh fetcher and discovery (another instance, or the window over) asks again.
    await expect(
      keysWith({ http: httpWith({ failureCacheMs: 0 }) }).keysFor(`${base}/broken`),
    ).rejects.toThrow(/500/);
    expect(discoveries('broken') - before).toBe(2);
  });

  it('caches a failing key set too: one request for 20 verifications', async () => {
    const keys = await keysWith({ http: httpWith({ failureCacheMs: 60_000 }) }).keysFor(
      `${base}/sameorigin`,
    );
    jwksStatus = 500;
    try {
      const before = hits.get('/jwks') ?? 0;
      for (let i = 0; i < 20; i++)
        await expect(
          keys({ alg: 'ES256', kid: 'k1' }, { payload: '', signature: '' } as never),
        ).rejects.toThrow();
      expect((hits.get('/jwks') ?? 0) - before).toBe(1);
    } finally {
      jwksStatus = 200;
    }
  });

  it("refuses a discovery whose authorization_endpoint is not on the issuer's origin", async () => {
    await expect(keysWith().keysFor(`${base}/elsewhere`)).rejects.toThrow(
      /authorization_endpoint is not on the issuer's origin/,
    );
    await expect(keysWith().keysFor(`${base}/sameorigin`)).resolves.toBeDefined();
  });

  it("keeps end_session_endpoint only as an https URL on the issuer's origin, else ignores it (issue 44)", async () => {
    const discovery = createProviderDiscovery({
      http,
      maxAgeMs: 60_000,
      failureCacheMs: 0,
      maxProviders: 10,
    });
    expect((await discovery.endpointsOf(`${base}/logouthere`)).endSession).toBe(`${base}/end`);
    // The provider stays usable (its keys), only without a logout to send browsers to.
    const elsewhere = await discovery.endpointsOf(`${base}/logoutelsewhere`);
    expect(elsewhere.jwksUri).toBe(`${base}/jwks`);
    expect(elsewhere.endSession).toBeUndefined();
    expect((await discovery.endpointsOf(`${base}/logoutplain`)).endSession).toBeUndefined();
    expect((await discovery.endpointsOf(`${base}/good`)).endSession).toBeUndefined();
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

describe('the address rule (sso.allowPrivateIssuers false)', () => {
  const pub = () => httpWith({ allowPrivateAddresses: false, failureCacheMs: 0 });

  it('connects to no loopback address: an IP literal, or a name resolving to one', async () => {
    const before = discoveries('good');
    const port = new URL(base).port;
    for (const issuer of [`${base}/good`, `https://127.0.0.1:${port}/good`])
      await expect(keysWith({ http: pub() }).keysFor(issuer)).rejects.toThrow(
        /not a public address/,
      );
    expect(discoveries('good')).toBe(before);
  });

  it('refuses at connect time a public-looking name whose DNS answers a private address (rebinding)', async () => {
    let answer = '93.184.216.34';
    const lookups: string[] = [];
    // A resolver that answers public when the IdP is set and loopback when it is fetched.
    const lookup = ((hostname: string, _options: unknown, callback: (...a: unknown[]) => void) => {
      lookups.push(hostname);
      callback(null, [
        { address: answer, family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    }) as unknown as LookupFunction;
    const rebinding = httpWith({ allowPrivateAddresses: false, failureCacheMs: 0, lookup });
    const before = discoveries('good');
    const url = `https://idp.rebinding.example:${new URL(base).port}/good/.well-known/openid-configuration`;
    await expect(rebinding.getJson(url)).rejects.toThrow(/not a public address/);
    answer = '::ffff:7f00:1';
    await expect(rebinding.getJson(url)).rejects.toThrow(/not a public address/);
    expect(lookups).toEqual(['idp.rebinding.example', 'idp.rebinding.example']);
    expect(discoveries('good')).toBe(before);
  });
});
