/**
 * Fail closed: with the store unreachable, nobody is let in on a guess. Every
 * endpoint that needs the store answers 503 `unavailable` promptly (no hang),
 * and service resumes when Redis is back.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';

let fx: RedisIdentityFixture;
beforeAll(async () => {
  fx = await startIdentityFixture();
});
afterAll(() => fx.close());

it('answers 503 unavailable while Redis is down, and recovers when it is back', async () => {
  const url = fx.gw.url;
  const { access_token } = await tokenFor(url, ALICE, 'acme');
  await fx.redis.kill();

  const started = Date.now();
  await expectError(
    await fetch(`${url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    }),
    503,
    'unavailable',
  );
  await expectError(
    await fetch(`${url}/1/tenants/current`, { headers: { authorization: bearer(access_token) } }),
    503,
    'unavailable',
  );
  expect(Date.now() - started).toBeLessThan(5000);
  // The JWKS needs no store and keeps serving.
  expect((await fetch(`${url}/.well-known/jwks.json`)).status).toBe(200);

  await fx.redis.restart();
  // The restarted server is empty (no persistence): the old token's user is
  // gone, so the token is refused, not let in.
  let status = 0;
  for (let i = 0; i < 50 && (status === 0 || status === 503); i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (
      await fetch(`${url}/1/tenants/current`, { headers: { authorization: bearer(access_token) } })
    ).status;
  }
  expect(status).toBe(401);
});
