/**
 * Issue 42, finding 3: a tenant admin stays inside their own role. With
 * `authorization.clientScopes` omitted (the default), an admin whose role
 * holds `catalog:read` only may not make a client holding `platform:ops` — a
 * scope of a route the admin itself is refused on — nor take a new secret or
 * API key of a client that holds it (one the operator made); a client within
 * the role is made, and its token passes only what the role's would. On a real
 * gateway (in-memory store) with a real upstream.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, bearerJson } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { useEchoFixture } from '../support/echo-fixture.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { clientToken, makeClient } from '../support/machine-client.js';

const echo = useEchoFixture((upstream) => ({
  routes: [
    { prefix: '/ops', upstream, scopes: { '*': ['platform:ops'] } },
    { prefix: '/catalog', upstream, scopes: { '*': ['catalog:read'] } },
  ],
  authorization: { roles: { admin: ['catalog:read'], member: [] } },
}));
/** Alice: acme's creator, so its admin; her role holds catalog:read only. */
let admin: string;
beforeAll(async () => {
  admin = (await tokenFor(echo.fx.gw.url, ALICE, 'acme')).access_token;
});

const post = (path: string, body?: unknown) =>
  bearerJson(echo.fx.gw.url, 'POST', path, admin, body);
const get = (path: string, token: string) =>
  fetch(`${echo.fx.gw.url}${path}`, { headers: { authorization: bearer(token) } });

describe('a tenant admin, clientScopes omitted', () => {
  it('is refused a client holding a scope their role lacks (400 invalid_request), and nothing is made', async () => {
    // The admin's own token is refused on the route the scope opens.
    await expectError(await get('/ops/x', admin), 403, 'insufficient_scope');
    const before = await echo.fx.gw.gateway.store.clients.listClients('acme');
    for (const scopes of [['platform:ops'], ['catalog:read', 'platform:ops']]) {
      const res = await post('/1/tenants/acme/clients', { name: 'escalate', scopes });
      const body = await expectError(res, 400, 'invalid_request');
      expect(body.error_description).toBe(
        'Invalid scopes: platform:ops is not a scope a machine client may hold.',
      );
    }
    expect(await echo.fx.gw.gateway.store.clients.listClients('acme')).toEqual(before);
  });

  it("makes a client within their role: its token passes the role's route, not the other", async () => {
    const res = await post('/1/tenants/acme/clients', { name: 'reader', scopes: ['catalog:read'] });
    expect(res.status).toBe(201);
    const { client_id, client_secret } = (await res.json()) as Record<string, string>;
    const token = await clientToken(echo.fx.gw.url, {
      clientId: client_id as string,
      clientSecret: client_secret as string,
    });
    expect((await get('/catalog/x', token)).status).toBe(200);
    await expectError(await get('/ops/x', token), 403, 'insufficient_scope');
  });

  it("takes no new secret or key of the operator's client holding more (403), but of its own", async () => {
    const operators = await makeClient(echo.fx.gw.gateway.store, 'acme', [
      'catalog:read',
      'platform:ops',
    ]);
    const path = `/1/tenants/acme/clients/${operators.clientId}`;
    const digest = (await echo.fx.gw.gateway.store.clients.getClient(operators.clientId))
      ?.secretDigest;
    for (const suffix of ['/secret', '/keys']) {
      const body = await expectError(await post(`${path}${suffix}`), 403, 'forbidden');
      expect(body.error_description).toMatch(/platform:ops/);
    }
    expect(
      (await echo.fx.gw.gateway.store.clients.getClient(operators.clientId))?.secretDigest,
    ).toBe(digest);
    expect(await echo.fx.gw.gateway.store.apiKeys.listApiKeys(operators.clientId)).toEqual([]);
    // The operator's client still works with the secret the operator gave it.
    expect((await get('/ops/x', await clientToken(echo.fx.gw.url, operators))).status).toBe(200);

    const own = await makeClient(echo.fx.gw.gateway.store, 'acme', ['catalog:read']);
    expect((await post(`/1/tenants/acme/clients/${own.clientId}/secret`)).status).toBe(200);
    expect((await post(`/1/tenants/acme/clients/${own.clientId}/keys`)).status).toBe(201);
  });
});
