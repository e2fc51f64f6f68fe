/**
 * Issue 32, item 4: a role change ends the tokens issued under the old role,
 * on every instance, before `member role` returns — as a membership removal
 * does (the store moves the membership to a new generation). A demoted
 * admin's token, with the admin's scopes, is refused on the other instance
 * at once; the new token carries the member's scopes, and is refused where
 * only an admin's scope passes (`insufficient_scope`). Two instances on one
 * redis-server.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { memberRole } from '../../src/cli/members.js';
import { validateConfig } from '../../src/config/index.js';
import { printedJson } from '../support/captured-stdout.js';
import { expectBearerChallenge, expectError } from '../support/expect-error.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startIdentityFixture({
    authorization: {
      roles: { admin: ['catalog:read', 'catalog:write'], member: ['catalog:read'] },
    },
    routes: [
      {
        prefix: '/catalog',
        upstream: upstream.url,
        scopes: { GET: ['catalog:read'], '*': ['catalog:write'] },
      },
    ],
  });
  a = fx.gw;
  b = await fx.startAnother();
});
afterAll(async () => {
  await fx?.close();
  await upstream?.close();
});

const write = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/catalog/items`, {
    method: 'POST',
    body: '{}',
    headers: { authorization: bearer(token) },
  });

it('a demoted admin’s token is refused on the other instance as soon as `member role` returns', async () => {
  const before = await tokenFor(a.url, ALICE, 'acme');
  expect(before['scope']).toBe('catalog:read catalog:write');
  // Both instances have verified and cached the admin's token.
  for (const gw of [a, b]) expect((await write(gw, before.access_token)).status).toBe(200);

  const loaded = {
    config: validateConfig({ ...fx.config, seed: undefined }, process.cwd(), 'cli'),
    files: [],
  };
  expect(await printedJson(() => memberRole(loaded, 'acme', ALICE.email, 'member'))).toMatchObject({
    tenant_id: 'acme',
    members: expect.arrayContaining([
      expect.objectContaining({ user_email: ALICE.email, role: 'member' }),
    ]) as unknown,
  });

  for (const gw of [b, a]) {
    const res = await write(gw, before.access_token);
    await expectError(res, 401, 'invalid_token');
    expectBearerChallenge(res);
  }

  // Her new token carries the member's scopes: reading passes, writing does not.
  const after = await tokenFor(b.url, ALICE, 'acme');
  expect(after['scope']).toBe('catalog:read');
  for (const gw of [a, b]) {
    const read = await fetch(`${gw.url}/catalog/items`, {
      headers: { authorization: bearer(after.access_token) },
    });
    expect(read.status).toBe(200);
    await expectError(await write(gw, after.access_token), 403, 'insufficient_scope');
  }

  // Promoted back: the member's token ends too, and an admin's token writes again.
  await printedJson(() => memberRole(loaded, 'acme', ALICE.email, 'admin'));
  for (const gw of [a, b]) {
    const res = await write(gw, after.access_token);
    await expectError(res, 401, 'invalid_token');
  }
  const again = await tokenFor(a.url, ALICE, 'acme');
  for (const gw of [a, b]) expect((await write(gw, again.access_token)).status).toBe(200);
});
