/**
 * A tenant's identity provider on Redis (issue 34): two gateways sharing one
 * store see the same record at once; two tenants racing for one issuer never
 * both get it (one script writes a record and its issuer together); no Redis
 * value holds the client secret.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, type TestGateway } from '../support/gateway.js';
import { verifyDomains } from '../support/verified-domains.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';

const SECRET = `idp-secret-${randomBytes(12).toString('hex')}`;

let fx: RedisIdentityFixture;
let other: TestGateway;
let aliceAcme: string;
let bobGlobex: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-sso-'));
  const keyFile = join(dir, 'sso.key');
  writeFileSync(keyFile, randomBytes(32).toString('base64'));
  fx = await startIdentityFixture({ sso: { secretsKeyFile: keyFile } });
  other = await fx.startAnother();
  await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.example']);
  await verifyDomains(fx.gw.gateway.store, 'globex', ['globex.example']);
  aliceAcme = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
  bobGlobex = (await tokenFor(fx.gw.url, BOB, 'globex')).access_token;
}, 60_000);
afterAll(() => fx?.close());

async function put(gw: TestGateway, tenant: string, token: string, body: unknown) {
  const res = await fetch(`${gw.url}/1/tenants/${tenant}/idp`, {
    method: 'PUT',
    headers: { authorization: bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function get(gw: TestGateway, tenant: string, token: string) {
  const res = await fetch(`${gw.url}/1/tenants/${tenant}/idp`, {
    headers: { authorization: bearer(token) },
  });
  return { status: res.status, text: await res.text() };
}

it('one instance sets it, the other reads it and removes it, the first sees it gone', async () => {
  const idp = {
    issuer: 'https://login.acme.example',
    client_id: 'gw',
    client_secret: SECRET,
    domains: ['acme.example'],
  };
  expect((await put(fx.gw, 'acme', aliceAcme, idp)).status).toBe(201);
  const read = await get(other, 'acme', aliceAcme);
  expect(read.status).toBe(200);
  expect(JSON.parse(read.text)).toMatchObject({
    issuer: 'https://login.acme.example',
    client_secret_set: true,
  });
  expect(read.text).not.toContain(SECRET);

  const redis = new Redis(fx.redis.url);
  try {
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      const value =
        type === 'hash'
          ? JSON.stringify(await redis.hgetall(key))
          : type === 'stream'
            ? JSON.stringify(await redis.xrange(key, '-', '+'))
            : type === 'string'
              ? await redis.get(key)
              : '';
      expect(`${key} ${value}`).not.toContain(SECRET);
    }
  } finally {
    redis.disconnect();
  }

  const removed = await fetch(`${other.url}/1/tenants/acme/idp`, {
    method: 'DELETE',
    headers: { authorization: bearer(aliceAcme) },
  });
  expect(removed.status).toBe(204);
  expect((await get(fx.gw, 'acme', aliceAcme)).status).toBe(404);
});

it('two tenants racing for one issuer and client id through two instances: exactly one gets it', async () => {
  for (let round = 0; round < 5; round++) {
    const issuer = `https://shared-${round}.example`;
    const body = { issuer, client_id: 'gw' };
    const answers = await Promise.all([
      put(fx.gw, 'acme', aliceAcme, { ...body, domains: ['acme.example'] }),
      put(other, 'globex', bobGlobex, { ...body, domains: ['globex.example'] }),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 409)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(1);
    const holders = await Promise.all([
      get(fx.gw, 'acme', aliceAcme),
      get(other, 'globex', bobGlobex),
    ]);
    expect(holders.filter((h) => h.status === 200 && h.text.includes(issuer))).toHaveLength(1);
    expect(await fx.gw.gateway.store.idps.tenantIdByClient(issuer, 'gw')).toMatch(
      /^(acme|globex)$/,
    );
  }
});
