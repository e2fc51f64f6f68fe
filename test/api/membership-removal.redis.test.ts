/**
 * Issue 12, class 5: removing a member ends that user's access to that tenant
 * at once, on every instance — their unexpired tokens for it included, for
 * good: adding them back (issue 30) lets in only tokens issued since — while
 * a steady stream of proxied requests still makes no Redis call. A token
 * whose membership is gone is an invalid token: 401 `invalid_token`, as for a
 * revoked one (`tenant_access_denied` stays the answer to a token request).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import { memberChange } from '../../src/cli/admin.js';
import { validateConfig } from '../../src/config/index.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { printedJson } from '../support/captured-stdout.js';
import { expectBearerChallenge, expectError } from '../support/expect-error.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let upstream: Upstream;
let redis: Redis;
/** The default lease (`revocation.leaseMs`). */
const LEASE_MS = 2000;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startIdentityFixture({ routes: [{ prefix: '/api', upstream: upstream.url }] });
  a = fx.gw;
  b = await fx.startAnother();
  redis = new Redis(fx.redis.url);
});
afterAll(async () => {
  redis.disconnect();
  await fx.close();
  await upstream.close();
});

const proxied = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/api/x`, { headers: { authorization: bearer(token) } });
const tenant = (gw: TestGateway, token: string, tenantId: string) =>
  fetch(`${gw.url}/1/tenants/${tenantId}`, { headers: { authorization: bearer(token) } });

async function expectRefused(res: Response): Promise<void> {
  await expectError(res, 401, 'invalid_token');
  expectBearerChallenge(res);
}

/** Bob's acme token from before his removal (the first test). */
let removedToken: string;

it('a member removed on one instance loses the tenant on every instance at once', async () => {
  const acme = await tokenFor(a.url, BOB, 'acme');
  removedToken = acme.access_token;
  const globex = await tokenFor(b.url, BOB, 'globex');
  const bobId = acme['user_id'] as string;
  for (const gw of [a, b]) {
    expect((await proxied(gw, acme.access_token)).status).toBe(200);
    expect((await tenant(gw, acme.access_token, 'acme')).status).toBe(200);
    expect((await proxied(gw, globex.access_token)).status).toBe(200);
  }
  // Warm caches: the steady state makes no store call, membership included.
  const warm = await commandsDuring(redis, async () => {
    for (let i = 0; i < 100; i++) {
      expect((await proxied(a, acme.access_token)).status).toBe(200);
      expect((await proxied(b, acme.access_token)).status).toBe(200);
    }
  });
  expect(warm.data).toBe(0);
  // Only the two instances' lease renewals, which run whatever the traffic.
  expect(warm.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, warm.elapsedMs));

  expect(await b.gateway.store.memberships.removeMember('acme', bobId)).toBe(true);

  for (const gw of [a, b]) {
    await expectRefused(await proxied(gw, acme.access_token));
    await expectRefused(await tenant(gw, acme.access_token, 'acme'));
    await expectRefused(await tenant(gw, acme.access_token, 'current'));
    // Only that tenant: his other memberships are untouched.
    expect((await proxied(gw, globex.access_token)).status).toBe(200);
  }
  // And no new token for it either.
  const res = await fetch(`${a.url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(BOB.email, BOB.password) },
  });
  await expectError(res, 403, 'tenant_access_denied');

  // Refusals are cached too: hammering with the dead token costs Redis nothing.
  const refused = await commandsDuring(redis, async () => {
    for (let i = 0; i < 20; i++) expect((await proxied(a, acme.access_token)).status).toBe(401);
  });
  expect(refused.data).toBe(0);
  expect(refused.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, refused.elapsedMs));
});

it('a member added back gets the tenant on every instance at once, under new tokens only', async () => {
  const bobId = (await tokenFor(a.url, BOB, 'globex'))['user_id'] as string;
  // Both instances hold bob's acme membership as gone (the test above): adding him back must reach them.
  expect(await a.gateway.store.memberships.addMember('acme', bobId)).toBe(true);
  const fresh = await tokenFor(b.url, BOB, 'acme');
  for (const gw of [a, b]) {
    expect((await proxied(gw, fresh.access_token)).status).toBe(200);
    expect((await tenant(gw, fresh.access_token, 'acme')).status).toBe(200);
    // Issue 30: the membership added back is another one; the token of the removed one stays dead.
    await expectRefused(await proxied(gw, removedToken));
    await expectRefused(await tenant(gw, removedToken, 'acme'));
  }
  // Both verdicts from the cache: the new token's and the old one's cost Redis nothing.
  const steady = await commandsDuring(redis, async () => {
    for (let i = 0; i < 20; i++) {
      for (const gw of [a, b]) {
        expect((await proxied(gw, fresh.access_token)).status).toBe(200);
        expect((await proxied(gw, removedToken)).status).toBe(401);
      }
    }
  });
  expect(steady.data).toBe(0);
  expect(steady.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, steady.elapsedMs));
});

it('`member remove` from the command line ends the access on every running instance', async () => {
  const acme = await tokenFor(a.url, ALICE, 'acme');
  for (const gw of [a, b]) expect((await proxied(gw, acme.access_token)).status).toBe(200);

  const loaded = {
    config: validateConfig({ ...fx.config, seed: undefined }, process.cwd(), 'cli'),
    files: [],
  };
  expect(
    await printedJson(() => memberChange(loaded, 'remove', 'acme', ALICE.email)),
  ).toMatchObject({
    tenant_id: 'acme',
  });

  for (const gw of [a, b]) {
    await expectRefused(await proxied(gw, acme.access_token));
    await expectRefused(await tenant(gw, acme.access_token, 'acme'));
  }
});
