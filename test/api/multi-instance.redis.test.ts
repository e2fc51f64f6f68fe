/**
 * Two gateway instances on one Redis and one key directory: a token from one
 * is good on the other, and a password change or logout on one refuses the
 * old token on the other at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  BOB,
  startIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let fx: IdentityFixture;
let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  fx = await startIdentityFixture();
  a = fx.gw;
  b = await fx.startAnother();
});
afterAll(() => fx.close());

const tenantOn = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

it('a token issued by one instance is accepted by the other', async () => {
  const { access_token } = await tokenFor(a.url, BOB, 'globex');
  const res = await tenantOn(b, access_token);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { tenant_id: string }).tenant_id).toBe('globex');
});

it('a password change on one instance refuses the old token on the other at once', async () => {
  const { access_token } = await tokenFor(a.url, BOB, 'acme');
  expect((await tenantOn(b, access_token)).status).toBe(200);
  const change = await fetch(`${a.url}/1/users/current/password`, {
    method: 'PUT',
    headers: { authorization: basic(BOB.email, BOB.password), 'content-type': 'application/json' },
    body: JSON.stringify({ password: 'bob-password-2' }),
  });
  expect(change.status).toBe(204);
  await expectError(await tenantOn(b, access_token), 401, 'invalid_token');
  await expectError(await tenantOn(a, access_token), 401, 'invalid_token');
  const fresh = await tokenFor(b.url, { ...BOB, password: 'bob-password-2' }, 'acme');
  expect((await tenantOn(a, fresh.access_token)).status).toBe(200);
});

it('a logout on one instance refuses the token on the other at once', async () => {
  const { access_token } = await tokenFor(b.url, { ...BOB, password: 'bob-password-2' }, 'globex');
  const del = await fetch(`${b.url}/1/token`, {
    method: 'DELETE',
    headers: { authorization: bearer(access_token) },
  });
  expect(del.status).toBe(204);
  await expectError(await tenantOn(a, access_token), 401, 'invalid_token');
});
