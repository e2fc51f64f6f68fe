/**
 * The hot path's promise, on a real redis-server: a steady stream of proxied
 * requests makes no Redis call, revocation still takes effect on every
 * instance, and when the invalidation channel drops the cache is not trusted.
 */
import { Redis } from 'ioredis';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let upstream: Upstream;
let redis: Redis;
/** The default lease (`revocation.leaseMs`). */
const LEASE_MS = 2000;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startIdentityFixture({
    routes: [{ prefix: '/api', upstream: upstream.url }],
  });
  a = fx.gw;
  b = await fx.startAnother();
  redis = new Redis(fx.redis.url);
});
afterAll(async () => {
  redis.disconnect();
  await fx.close();
  await upstream.close();
});

const get = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/api/x`, { headers: { authorization: bearer(token) } });

it('a steady stream of proxied requests makes no Redis call', async () => {
  const { access_token } = await tokenFor(a.url, ALICE, 'acme');
  expect((await get(b, access_token)).status).toBe(200); // warms b's caches
  const calls = await commandsDuring(redis, async () => {
    for (let i = 0; i < 200; i++) expect((await get(b, access_token)).status).toBe(200);
  });
  expect(calls.data).toBe(0);
  // Only the two instances' lease renewals, which run whatever the traffic.
  expect(calls.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, calls.elapsedMs));
});

it('a logout on one instance refuses the token on the other with warm caches', async () => {
  const { access_token } = await tokenFor(a.url, ALICE, 'acme');
  expect((await get(b, access_token)).status).toBe(200);
  const del = await fetch(`${a.url}/1/token`, {
    method: 'DELETE',
    headers: { authorization: bearer(access_token) },
  });
  expect(del.status).toBe(204);
  await expectError(await get(b, access_token), 401, 'invalid_token');
});

it('with the invalidation channel cut, a revocation it never carried is still honoured', async () => {
  const { access_token } = await tokenFor(a.url, ALICE, 'acme');
  expect((await get(b, access_token)).status).toBe(200);
  const claims = JSON.parse(
    Buffer.from(access_token.split('.')[1] as string, 'base64url').toString(),
  ) as { jti: string };
  await redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  await new Promise((r) => setTimeout(r, 100));
  // Deny-list the token behind the gateways' backs: no event is published.
  const prefix = (fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
  await redis.set(`${prefix}revoked:{${claims.jti}}`, '1', 'EX', 600);
  await expectError(await get(b, access_token), 401, 'invalid_token');
  // And once the channel is back, the cache built before the gap is gone too.
  for (
    let i = 0;
    i < 50 && Number((await redis.pubsub('NUMSUB', `${prefix}sessions`))[1]) < 2;
    i++
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(Number((await redis.pubsub('NUMSUB', `${prefix}sessions`))[1])).toBe(2);
  await expectError(await get(b, access_token), 401, 'invalid_token');
  await expectError(await get(a, access_token), 401, 'invalid_token');
});
