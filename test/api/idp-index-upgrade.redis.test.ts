/**
 * Issue 42, the IdP index's upgrade: versions before it kept `idp-issuers`
 * (issuer → tenant); the issuer + client id index `idp-clients` replaced it.
 * An IdP record stored before the upgrade, as a7ea8fd wrote it (the record's
 * hash and its `idp-issuers` entry, no `idp-clients` entry), must still own
 * its pair once a gateway of this version starts on that Redis: another
 * tenant's PUT of the same issuer and client id is 409 `issuer_in_use`.
 * A real redis-server, real gateways, a real HTTPS OIDC provider.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/expect-error.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import {
  BOB,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { verifyDomains } from '../support/verified-domains.js';
import { ACME_CLIENT, GLOBEX_CLIENT } from '../support/token-exchange.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

let fx: RedisIdentityFixture;
let redis: Redis;
let dir: string;
let upgraded: TestGateway;
let bobGlobex: string;

const idps = useTestIdps({
  idp: {
    alg: 'ES256',
    clients: [ACME_CLIENT, GLOBEX_CLIENT],
    accounts: {},
  },
});

beforeAll(async () => {
  // The test provider listens on loopback.
  fx = await startIdentityFixture({
    sso: loopbackSso(idps.ca),
  });
  const { keyPrefix } = (fx.config.store as { redis: { keyPrefix: string } }).redis;
  dir = `${keyPrefix}{dir}:`;
  redis = new Redis(fx.redis.url);
  // acme's IdP as a7ea8fd stored it: the record, and its issuer in idp-issuers only.
  await redis.hset(`${dir}idp:acme`, {
    tenantId: 'acme',
    issuer: idps.idp.issuer,
    clientId: ACME_CLIENT.clientId,
    domains: 'acme.test',
    role: 'member',
    linkExisting: '0',
    updatedAt: '1764115260',
  });
  await redis.hset(`${dir}idp-issuers`, idps.idp.issuer, 'acme');
  // The upgrade: a gateway of this version starts on that Redis.
  upgraded = await fx.startAnother();
  await verifyDomains(upgraded.gateway.store, 'globex', ['globex.test']);
  bobGlobex = (await tokenFor(upgraded.url, BOB, 'globex')).access_token;
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await fx?.close();
});

function putIdp(clientId: string): Promise<Response> {
  return fetch(`${upgraded.url}/1/tenants/globex/idp`, {
    method: 'PUT',
    headers: { authorization: bearer(bobGlobex), 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer: idps.idp.issuer,
      client_id: clientId,
      domains: ['globex.test'],
    }),
  });
}

describe('an IdP record stored before the issuer + client id index', () => {
  it("still owns its pair after the upgrade: another tenant's PUT of it is 409 issuer_in_use", async () => {
    await expectError(await putIdp(ACME_CLIENT.clientId), 409, 'issuer_in_use');
    expect(await upgraded.gateway.store.idps.getTenantIdp('globex')).toBeNull();
    // The same issuer with a client of globex's own is fine (issue 42, finding 6).
    const own = await putIdp(GLOBEX_CLIENT.clientId);
    expect(own.status, await own.clone().text()).toBe(201);
  });

  it('is indexed under its issuer and client id, and the old index is gone', async () => {
    expect(await redis.hgetall(`${dir}idp-clients`)).toEqual({
      [`${idps.idp.issuer} ${ACME_CLIENT.clientId}`]: 'acme',
      [`${idps.idp.issuer} ${GLOBEX_CLIENT.clientId}`]: 'globex',
    });
    expect(await redis.exists(`${dir}idp-issuers`)).toBe(0);
  });

  it('a later start changes nothing: an entry present is kept, whoever holds it', async () => {
    // A record whose pair another tenant's entry already holds (never written
    // by either version; here by hand) does not take the pair over.
    await redis.hset(`${dir}idp:globex`, 'clientId', ACME_CLIENT.clientId);
    await fx.startAnother();
    expect(
      await redis.hget(`${dir}idp-clients`, `${idps.idp.issuer} ${ACME_CLIENT.clientId}`),
    ).toBe('acme');
    expect(await redis.hlen(`${dir}idp-clients`)).toBe(2);
  });
});
