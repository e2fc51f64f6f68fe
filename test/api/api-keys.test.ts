/**
 * Issue 32, API keys on the request path, end to end on a real gateway
 * (in-memory store) and a real upstream: a key in `Authorization: Bearer`
 * and in `X-API-Key` reaches a route as its client (never the key itself);
 * the hostile cases — a key one byte off anywhere, another tenant named in
 * every spelling, a scope the client lacks, two credentials at once, the
 * header twice; removal and expiry; the audit event of a key used after its
 * removal; and a gateway with keys off, which takes none.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';
import { startMemoryIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';
import { forgedApiKey, makeApiKey, makeClient } from '../support/machine-client.js';

let upstream: CountingUpstream;
let fx: IdentityFixture;
let off: IdentityFixture;
let url: string;
let acme: { clientId: string; keyId: string; apiKey: string };

beforeAll(async () => {
  upstream = await startEchoUpstream();
  const upstreamUrl = upstream.url;
  const routes = [
    {
      prefix: '/orders',
      upstream: upstreamUrl,
      tenant: { header: 'X-Tenant-Id', path: '/orders/tenants/:tenant_id', query: 'tenant_id' },
      scopes: { GET: ['orders:read'], '*': ['orders:write'] },
    },
    { prefix: '/public', upstream: upstreamUrl, auth: 'none' },
  ];
  const authorization = { clientScopes: ['orders:read', 'orders:write'] };
  fx = await startMemoryIdentityFixture({ routes, authorization, apiKeys: { enabled: true } });
  off = await startMemoryIdentityFixture({ routes, authorization });
  url = fx.gw.url;
  const { clientId } = await makeClient(fx.gw.gateway.store, 'acme', ['orders:read']);
  acme = { clientId, ...(await makeApiKey(fx.gw.gateway.store, clientId)) };
});
afterAll(async () => {
  await fx?.close();
  await off?.close();
  await upstream?.close();
});

const call = (path: string, headers: Record<string, string>, base = url, method = 'GET') =>
  fetch(`${base}${path}`, { method, headers });
const withKey = (key: string, extra: Record<string, string> = {}) => ({
  'x-api-key': key,
  ...extra,
});

describe('an API key on a route', () => {
  it('is its client, in Authorization: Bearer or X-API-Key; the key never reaches the upstream', async () => {
    const spellings: Record<string, string>[] = [
      { authorization: bearer(acme.apiKey) },
      withKey(acme.apiKey),
      { 'X-API-KEY': acme.apiKey },
    ];
    for (const headers of spellings) {
      upstream.requests.length = 0;
      const res = await call('/orders/list', { ...headers, 'x-tenant-id': 'acme' });
      expect(res.status).toBe(200);
      const got = upstream.requests[0]?.headers as IncomingHttpHeaders;
      expect(got['x-client-id']).toBe(acme.clientId);
      expect(got['x-tenant-id']).toBe('acme');
      expect(got['x-tenant-type']).toBe('orgtenant');
      expect(got['x-scope']).toBe('orders:read');
      expect(got['x-user-id']).toBeUndefined();
      expect(got['x-user-email']).toBeUndefined();
      expect(got['x-api-key']).toBeUndefined();
      expect(got.authorization).toBeUndefined();
      expect(JSON.stringify(got)).not.toContain(acme.apiKey);
    }
  });

  it('is stripped in every spelling, on a public route too', async () => {
    upstream.requests.length = 0;
    const res = await call('/public/x', { 'x-api-key': acme.apiKey, x_api_key: acme.apiKey });
    expect(res.status).toBe(200);
    expect(JSON.stringify(upstream.requests[0]?.headers)).not.toContain(acme.apiKey);
  });

  it('has its client’s scopes: a method needing another is 403 insufficient_scope', async () => {
    const res = await call('/orders/list', withKey(acme.apiKey), url, 'POST');
    await expectError(res, 403, 'insufficient_scope');
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="orders:write"',
    );
  });

  it('is refused with another tenant named, in every spelling: 403 tenant_mismatch', async () => {
    const cases = [
      call('/orders/list', withKey(acme.apiKey, { 'X-Tenant-Id': 'globex' })),
      call('/orders/list', withKey(acme.apiKey, { x_tenant_id: 'globex' })),
      call('/orders/tenants/globex/items', withKey(acme.apiKey)),
      call('/orders/list?tenant_id=globex', withKey(acme.apiKey)),
      call('/orders/list?tenant_id=acme&tenant_id=globex', withKey(acme.apiKey)),
    ];
    for (const res of await Promise.all(cases)) await expectError(res, 403, 'tenant_mismatch');
    expect((await call('/orders/tenants/acme/items', withKey(acme.apiKey))).status).toBe(200);
  });

  it('one byte off anywhere is 401 invalid_token, even with the checksum made right', async () => {
    const refusals = [];
    for (let i = 4; i < acme.apiKey.length; i++) {
      if (acme.apiKey[i] === '_' && (i === 20 || i === 64)) continue;
      const forged = forgedApiKey(acme.apiKey, i);
      expect(forged).not.toBe(acme.apiKey);
      refusals.push(call('/orders/list', withKey(forged)));
      refusals.push(call('/orders/list', { authorization: bearer(forged) }));
    }
    refusals.push(call('/orders/list', withKey(acme.apiKey.slice(0, -1))));
    refusals.push(call('/orders/list', withKey(`${acme.apiKey}x`)));
    refusals.push(call('/orders/list', withKey(acme.apiKey.toUpperCase())));
    refusals.push(call('/orders/list', withKey('')));
    for (const res of await Promise.all(refusals)) await expectError(res, 401, 'invalid_token');
  });

  it('two credentials at once are 400; the header twice is 401', async () => {
    const token = await fetch(`${url}/1/token?tenant_id=acme`, {
      headers: { authorization: `Basic ${btoa('alice@example.com:alice-password-1')}` },
    }).then(async (res) => ((await res.json()) as { access_token: string }).access_token);
    await expectError(
      await call('/orders/list', withKey(acme.apiKey, { authorization: bearer(token) })),
      400,
      'invalid_request',
    );
    const twice = await fetch(`${url}/orders/list`, {
      headers: [
        ['x-api-key', acme.apiKey],
        ['x-api-key', acme.apiKey],
      ],
    });
    await expectError(twice, 401, 'invalid_token');
  });

  it('is not a credential of the identity API', async () => {
    await expectError(
      await call('/1/tenants/acme', { authorization: bearer(acme.apiKey) }),
      401,
      'invalid_token',
    );
    await expectError(
      await call('/1/token', { authorization: bearer(acme.apiKey) }, url, 'DELETE'),
      401,
      'invalid_token',
    );
  });

  it('is refused once expired, or once its client expired', async () => {
    const store = fx.gw.gateway.store;
    const soon = Math.floor(Date.now() / 1000) + 2;
    const { clientId } = await makeClient(store, 'acme', ['orders:read']);
    const key = await makeApiKey(store, clientId, { expiresAt: soon });
    const expiring = await makeClient(store, 'acme', ['orders:read'], { expiresAt: soon });
    const ofExpiring = await makeApiKey(store, expiring.clientId);
    for (const k of [key, ofExpiring])
      expect((await call('/orders/list', withKey(k.apiKey))).status).toBe(200);
    await new Promise((r) => setTimeout(r, (soon + 1) * 1000 - Date.now()));
    for (const k of [key, ofExpiring])
      await expectError(await call('/orders/list', withKey(k.apiKey)), 401, 'invalid_token');
  });
});

describe('a removed key', () => {
  it('is refused at once, and its use after removal is audited (never the key)', async () => {
    const store = fx.gw.gateway.store;
    const { clientId } = await makeClient(store, 'acme', ['orders:read']);
    const key = await makeApiKey(store, clientId);
    const other = await makeApiKey(store, clientId);
    expect((await call('/orders/list', withKey(key.apiKey))).status).toBe(200);
    expect((await call('/orders/list', withKey(other.apiKey))).status).toBe(200);
    expect(await store.apiKeys.removeApiKey(clientId, key.keyId)).toBe(true);
    await expectError(await call('/orders/list', withKey(key.apiKey)), 401, 'invalid_token');
    await expectError(
      await call('/orders/list', { authorization: bearer(key.apiKey) }),
      401,
      'invalid_token',
    );
    // The client's other key stands.
    expect((await call('/orders/list', withKey(other.apiKey))).status).toBe(200);
    const log = store.auditLog({ maxEventsPerStream: 10_000 });
    const events = (await log.read('tenant:acme', 0))
      .map((entry) => JSON.parse(entry.event) as Record<string, unknown>)
      .filter((event) => event.event === 'revoked_credential_used' && event.client_id === clientId);
    expect(events).toEqual([
      expect.objectContaining({
        actor: clientId,
        tenant_id: 'acme',
        client_id: clientId,
        key_id: key.keyId,
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(key.apiKey);
    const metrics = await (await fetch(`${fx.gw.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tenant_gateway_token_refusals_total\{reason="key_ended"\} [1-9]/m);
    expect(metrics).toMatch(/^tenant_gateway_token_refusals_total\{reason="unknown_key"\} [1-9]/m);
    expect(metrics).toMatch(
      /^tenant_gateway_token_refusals_total\{reason="malformed_key"\} [1-9]/m,
    );
    // Requests by principal kind: the key's accepted ones counted as api_key, never by id.
    const keyed = metrics
      .split('\n')
      .filter(
        (l) => l.startsWith('tenant_gateway_requests_total{') && l.includes('principal="api_key"'),
      );
    expect(keyed.some((l) => l.includes('outcome="accepted"') && !/ 0$/.test(l))).toBe(true);
    expect(metrics).not.toContain(clientId);
  });

  it('goes with its client', async () => {
    const store = fx.gw.gateway.store;
    const { clientId } = await makeClient(store, 'acme', ['orders:read']);
    const key = await makeApiKey(store, clientId);
    expect((await call('/orders/list', withKey(key.apiKey))).status).toBe(200);
    expect(await store.clients.removeClient(clientId)).toEqual([key.keyId]);
    await expectError(await call('/orders/list', withKey(key.apiKey)), 401, 'invalid_token');
  });
});

describe('a gateway with API keys off', () => {
  it('takes none: Bearer tgk_… is 401, X-API-Key is not read', async () => {
    const { clientId } = await makeClient(off.gw.gateway.store, 'acme', ['orders:read']);
    const key = await makeApiKey(off.gw.gateway.store, clientId);
    await expectError(
      await call('/orders/list', { authorization: bearer(key.apiKey) }, off.gw.url),
      401,
      'invalid_token',
    );
    const res = await call('/orders/list', withKey(key.apiKey), off.gw.url);
    await expectError(res, 401, 'invalid_token');
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="tenant-gateway"');
  });
});
