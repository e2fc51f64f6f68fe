/**
 * A tenant's identity provider as its admins set it (`/1/tenants/{tenant_id}/idp`,
 * issue 34), on a real gateway over the memory store: who may call it (a user,
 * admin of the token's tenant now: never a member, another tenant's admin or a
 * machine client), what it checks (an https issuer, DNS domains, each refusal
 * naming its field), one issuer for one tenant, and the secret write-only —
 * sealed in the store, in no answer, log line or audit event.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretSealer } from '../../src/auth/federation/sealed-secrets.js';
import type { Store } from '../../src/store/types.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
  seedTokens,
} from '../support/identity-fixture.js';
import { lineSink } from '../support/log-sink.js';
import { clientToken, makeClient } from '../support/machine-client.js';
import { verifyDomains } from '../support/verified-domains.js';
import { adminCall } from '../support/admin-call.js';

const SECRET = `idp-secret-${randomBytes(12).toString('hex')}`;
const KEY = randomBytes(32);
const ACME_ISSUER = 'https://login.acme.example/realms/acme';

let fx: IdentityFixture;
let gw: TestGateway;
let store: Store;
const log = lineSink();
/** Alice: acme's creator, so its admin. */
let aliceAcme: string;
/** Bob: a member of acme, the creator (admin) of globex. */
let bobAcme: string;
let bobGlobex: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-sso-'));
  const keyFile = join(dir, 'sso.key');
  writeFileSync(keyFile, `${KEY.toString('base64')}\n`);
  fx = await startMemoryIdentityFixture({ sso: { secretsKeyFile: keyFile } });
  // The fixture's own gateway logs nothing; this one, on the same config, logs every line here.
  gw = await startTestGateway(fx.config, { logTo: log.stream });
  store = gw.gateway.store;
  await verifyDomains(store, 'acme', ['acme.example', 'acme-corp.example']);
  await verifyDomains(store, 'globex', ['globex.example']);
  ({ aliceAcme, bobAcme, bobGlobex } = await seedTokens(gw.url));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await fx?.close();
});

const call = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  on: TestGateway = gw,
) => adminCall(on.url, method, path, token, body);

const acmeIdp = (overrides: Record<string, unknown> = {}) => ({
  issuer: ACME_ISSUER,
  client_id: 'tenant-gateway',
  client_secret: SECRET,
  domains: ['Acme.example', 'acme-corp.example'],
  ...overrides,
});

const audited = (event: string) =>
  log.lines
    .filter((l) => l['msg'] === 'audit')
    .map((l) => l['audit'] as Record<string, unknown>)
    .filter((a) => a['event'] === event);

describe("the tenant's admin", () => {
  it('sets it (201), reads it back without the secret, and the store keeps it sealed', async () => {
    const put = await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp({ role: 'admin' }));
    expect(put.status, put.text).toBe(201);
    expect(put.headers.get('cache-control')).toBe('no-store');
    const view = {
      tenant_id: 'acme',
      issuer: ACME_ISSUER,
      client_id: 'tenant-gateway',
      client_secret_set: true,
      domains: ['acme-corp.example', 'acme.example'],
      role: 'admin',
      link_existing: false,
      updated_at: expect.any(Number),
    };
    expect(put.body).toEqual(view);
    const get = await call('GET', '/1/tenants/current/idp', aliceAcme);
    expect([get.status, get.body]).toEqual([200, view]);
    expect(get.headers.get('cache-control')).toBe('no-store');

    const stored = await store.idps.getTenantIdp('acme');
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(createSecretSealer(KEY).open(stored!.clientSecretSealed!, 'acme')).toBe(SECRET);
    expect(await store.idps.tenantIdByClient(ACME_ISSUER, 'tenant-gateway')).toBe('acme');
    for (const text of [put.text, get.text]) expect(text).not.toContain(SECRET);
  });

  it('replaces it (200): the secret kept while issuer and client id stay, dropped otherwise', async () => {
    await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    const { client_secret: _, ...withoutSecret } = acmeIdp({ link_existing: true });
    const kept = await call('PUT', '/1/tenants/acme/idp', aliceAcme, withoutSecret);
    expect([kept.status, kept.body.client_secret_set, kept.body.link_existing]).toEqual([
      200,
      true,
      true,
    ]);
    expect(kept.body.role).toBe('member');
    const moved = await call('PUT', '/1/tenants/acme/idp', aliceAcme, {
      ...withoutSecret,
      client_id: 'another-client',
    });
    expect([moved.status, moved.body.client_secret_set]).toEqual([200, false]);
    const again = await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    expect(again.body.client_secret_set).toBe(true);
    const dropped = await call('PUT', '/1/tenants/acme/idp', aliceAcme, {
      ...withoutSecret,
      client_secret: null,
    });
    expect([dropped.status, dropped.body.client_secret_set]).toEqual([200, false]);
    expect((await store.idps.getTenantIdp('acme'))?.clientSecretSealed).toBeUndefined();
  });

  it('removes it (204), then it is gone (404), and its issuer is free', async () => {
    await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    const removed = await call('DELETE', '/1/tenants/acme/idp', aliceAcme);
    expect([removed.status, removed.text]).toEqual([204, '']);
    const gone = await call('GET', '/1/tenants/acme/idp', aliceAcme);
    expect([gone.status, gone.body.error]).toEqual([404, 'not_found']);
    const again = await call('DELETE', '/1/tenants/acme/idp', aliceAcme);
    expect([again.status, again.body.error]).toEqual([404, 'not_found']);
    expect(await store.idps.tenantIdByClient(ACME_ISSUER, 'tenant-gateway')).toBeNull();
    expect(audited('idp_removed').at(-1)).toMatchObject({
      tenant_id: 'acme',
      issuer: ACME_ISSUER,
      actor: ALICE.email,
      source: 'api',
    });
  });

  it("is refused another tenant's issuer and client id (409 issuer_in_use), exactly compared; the issuer with a client of its own is fine", async () => {
    await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    const globex = await call('PUT', '/1/tenants/globex/idp', bobGlobex, {
      issuer: 'https://login.globex.example',
      client_id: 'gw',
      domains: ['globex.example'],
    });
    expect(globex.status, globex.text).toBe(201);
    const taken = await call('PUT', '/1/tenants/acme/idp', aliceAcme, {
      ...acmeIdp(),
      issuer: 'https://login.globex.example',
      client_id: 'gw',
    });
    expect([taken.status, taken.body.error]).toEqual([409, 'issuer_in_use']);
    expect(taken.text).not.toContain('globex"');
    expect(await store.idps.tenantIdByClient('https://login.globex.example', 'gw')).toBe('globex');
    // Issue 42: one issuer serves several tenants, each through a client id of its own.
    const shared = await call('PUT', '/1/tenants/acme/idp', aliceAcme, {
      ...acmeIdp(),
      issuer: 'https://login.globex.example',
    });
    expect(shared.status, shared.text).toBe(200);
    expect(
      await store.idps.tenantIdByClient('https://login.globex.example', 'tenant-gateway'),
    ).toBe('acme');
    expect(await store.idps.tenantIdByClient('https://login.globex.example', 'gw')).toBe('globex');
    // A trailing slash or a letter's case is another issuer, and free.
    for (const issuer of ['https://login.globex.example/', 'https://LOGIN.globex.example']) {
      const other = await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp({ issuer }));
      expect(other.status, issuer).toBe(200);
      expect(other.body.issuer).toBe(issuer);
    }
  });

  it('is refused bad settings, 400 invalid_request naming the field', async () => {
    const cases: [Record<string, unknown> | string, RegExp][] = [
      [acmeIdp({ issuer: 'http://login.acme.example' }), /^Invalid issuer: must be an https/],
      [acmeIdp({ issuer: 'login.acme.example' }), /^Invalid issuer: /],
      [acmeIdp({ issuer: 'https://login.acme.example/?x=1' }), /^Invalid issuer: .*query/],
      [acmeIdp({ issuer: 'https://login.acme.example/#x' }), /^Invalid issuer: .*fragment/],
      [acmeIdp({ issuer: 'https://u:p@login.acme.example' }), /^Invalid issuer: .*credentials/],
      [acmeIdp({ client_id: '' }), /^Invalid client_id: /],
      [acmeIdp({ client_id: 'has space' }), /^Invalid client_id: /],
      [acmeIdp({ client_secret: '' }), /^Invalid client_secret: /],
      [acmeIdp({ domains: [] }), /^Invalid domains: must name at least one/],
      [acmeIdp({ domains: ['acme.example', 'not a domain'] }), /^Invalid domains\.1: /],
      [acmeIdp({ domains: ['localhost'] }), /^Invalid domains\.0: /],
      [acmeIdp({ domains: ['@acme.example'] }), /^Invalid domains\.0: /],
      [acmeIdp({ role: 'owner' }), /^Invalid role: /],
      [acmeIdp({ link_existing: 'yes' }), /^Invalid link_existing: /],
      [acmeIdp({ extra: 1 }), /^Invalid body: unknown field extra/],
      [{ client_id: 'x', domains: ['acme.example'] }, /^Invalid issuer: /],
      ['{not json', /not valid JSON/],
    ];
    for (const [body, description] of cases) {
      const res = await call('PUT', '/1/tenants/acme/idp', aliceAcme, body);
      expect([res.status, res.body.error], res.text).toEqual([400, 'invalid_request']);
      expect(res.body.error_description).toMatch(description);
      expect(res.text).not.toContain(SECRET);
    }
  });
});

describe('anyone else', () => {
  it('a member of the tenant (403 forbidden), whatever the method', async () => {
    await call('PUT', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await call(
        method,
        '/1/tenants/acme/idp',
        bobAcme,
        method === 'PUT' ? acmeIdp() : undefined,
      );
      expect([method, res.status, res.body.error]).toEqual([method, 403, 'forbidden']);
    }
    expect((await store.idps.getTenantIdp('acme'))?.issuer).toBe(ACME_ISSUER);
  });

  it("another tenant's admin (403 tenant_mismatch), whatever the method", async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await call(
        method,
        '/1/tenants/acme/idp',
        bobGlobex,
        method === 'PUT' ? acmeIdp() : undefined,
      );
      expect([method, res.status, res.body.error]).toEqual([method, 403, 'tenant_mismatch']);
    }
    expect((await store.idps.getTenantIdp('acme'))?.issuer).toBe(ACME_ISSUER);
  });

  it("a machine client's token (403 forbidden), whatever its scopes", async () => {
    const client = await makeClient(store, 'acme', []);
    const token = await clientToken(gw.url, client);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await call(
        method,
        '/1/tenants/acme/idp',
        token,
        method === 'PUT' ? acmeIdp() : undefined,
      );
      expect([method, res.status, res.body.error]).toEqual([method, 403, 'forbidden']);
    }
  });

  it('no or a bad bearer token (401); a personal tenant (403 forbidden)', async () => {
    expect((await call('GET', '/1/tenants/acme/idp', undefined)).status).toBe(401);
    expect((await call('GET', '/1/tenants/acme/idp', 'x.y.z')).status).toBe(401);
    const dana = { email: 'dana@example.com', password: 'dana-password-1' };
    const signup = await call('POST', '/1/users', undefined, dana);
    const personal = (await tokenFor(gw.url, dana, signup.body.tenant_id)).access_token;
    const res = await call('PUT', '/1/tenants/current/idp', personal, acmeIdp());
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
    expect(res.body.error_description).toMatch(/org tenants only/);
    expect(await store.idps.getTenantIdp(signup.body.tenant_id)).toBeNull();
  });

  it('another method (405, with Allow)', async () => {
    const res = await call('POST', '/1/tenants/acme/idp', aliceAcme, acmeIdp());
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('HEAD, GET, PUT, DELETE');
  });
});

describe('without sso.secretsKeyFile', () => {
  it('refuses a secret (400, naming client_secret and the setting); a set without one works', async () => {
    const { sso: _, ...withoutKey } = fx.config;
    const bare = await startTestGateway(withoutKey);
    try {
      await verifyDomains(bare.gateway.store, 'globex', ['g.example']);
      const token = (await tokenFor(bare.url, BOB, 'globex')).access_token;
      const idp = { issuer: 'https://idp.globex.example', client_id: 'gw', domains: ['g.example'] };
      const refused = await call(
        'PUT',
        '/1/tenants/globex/idp',
        token,
        { ...idp, client_secret: SECRET },
        bare,
      );
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request']);
      expect(refused.body.error_description).toMatch(
        /^Invalid client_secret: .*sso\.secretsKeyFile/,
      );
      expect(await bare.gateway.store.idps.getTenantIdp('globex')).toBeNull();
      const set = await call('PUT', '/1/tenants/globex/idp', token, idp, bare);
      expect([set.status, set.body.client_secret_set]).toEqual([201, false]);
    } finally {
      await bare.close();
    }
  });
});

describe('the secret', () => {
  it('is in no log line and no audit event; idp_set names the tenant, issuer and client id', async () => {
    const events = audited('idp_set');
    expect(events.length).toBeGreaterThan(0);
    expect(events.at(-1)).toEqual({
      time: expect.any(String),
      event: 'idp_set',
      source: 'api',
      actor: expect.any(String),
      client_ip: '127.0.0.1',
      request_id: expect.any(String),
      tenant_id: expect.any(String),
      issuer: expect.any(String),
      idp_client_id: expect.any(String),
    });
    expect(events.find((e) => e['tenant_id'] === 'acme')).toMatchObject({
      actor: ALICE.email,
      issuer: expect.stringMatching(/^https:\/\//),
    });
    const sealed = (await store.idps.getTenantIdp('acme'))?.clientSecretSealed;
    const everything = log.lines.map((l) => JSON.stringify(l)).join('\n');
    expect(log.lines.length).toBeGreaterThan(10);
    expect(everything).not.toContain(SECRET);
    if (sealed !== undefined) expect(everything).not.toContain(sealed);
  });
});
