/**
 * Issue 42: who made a machine client decides what bounds it now. With the
 * role `admin` holding `catalog:read` only, a client the operator made (as
 * `client add` records it) keeps `platform:ops`, within `clientScopes`
 * (omitted here); a client stored before its maker was recorded is bounded as
 * an admin's (fail closed): its token lacks `platform:ops` and asking for it
 * is `invalid_scope`. On a real gateway (in-memory store) with a real upstream.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { startMemoryIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';
import { clientCredentials, clientToken, makeClient } from '../support/machine-client.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

let upstream: CountingUpstream;
let fx: IdentityFixture;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [{ prefix: '/ops', upstream: upstream.url, scopes: { '*': ['platform:ops'] } }],
    authorization: { roles: { admin: ['catalog:read'], member: [] } },
  });
}, 60_000);
afterAll(async () => {
  await fx.close();
  await upstream.close();
});

const SCOPES = ['catalog:read', 'platform:ops'];
const ops = (token: string) =>
  fetch(`${fx.gw.url}/ops/x`, { headers: { authorization: bearer(token) } });

it("the operator's client holds scopes beyond the admin role", async () => {
  const client = await makeClient(fx.gw.gateway.store, 'acme', SCOPES, { createdBy: 'operator' });
  const token = await clientToken(fx.gw.url, client);
  expect(decodeJwt(token).scope).toBe('catalog:read platform:ops');
  expect((await ops(token)).status).toBe(200);
});

it("a client without a recorded maker is bounded by the admin role, as an admin's", async () => {
  for (const createdBy of ['nobody', 'admin'] as const) {
    const client = await makeClient(fx.gw.gateway.store, 'acme', SCOPES, { createdBy });
    const token = await clientToken(fx.gw.url, client);
    expect(decodeJwt(token).scope).toBe('catalog:read');
    await expectError(await ops(token), 403, 'insufficient_scope');
    const asked = await clientCredentials(fx.gw.url, client, { scope: 'platform:ops' });
    await expectError(asked, 400, 'invalid_scope');
  }
});
