/**
 * Issue 15: `routes[].tenantTypes` — a route that admits only some tenant
 * types refuses a token for another type with 403 `forbidden`, on the proxy
 * path, on forward-auth and on a WebSocket upgrade, before anything reaches
 * the upstream. And a route without `upstream`: forward-auth only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      { prefix: '/org-only', upstream: echo.url, tenantTypes: ['orgtenant'] },
      { prefix: '/anyone', upstream: echo.url },
      { prefix: '/ingress-only', tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/', upstream: echo.url },
    ],
  }),
  { token: true },
);
let personal: string;

beforeAll(async () => {
  const sub = (
    JSON.parse(Buffer.from(s.token.split('.')[1] as string, 'base64url').toString()) as {
      sub: string;
    }
  ).sub;
  const tenants = (await (
    await fetch(`${s.gw.url}/1/users/${sub}/tenants`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    })
  ).json()) as { tenants: { tenant_id: string; type: string }[] };
  const own = tenants.tenants.find((t) => t.type === 'usertenant');
  if (own === undefined) throw new Error('Alice has no personal tenant');
  personal = (await tokenFor(s.gw.url, ALICE, own.tenant_id)).access_token;
});

const get = (path: string, token: string, headers: Record<string, string> = {}) =>
  fetch(`${s.fx.gw.url}${path}`, { headers: { authorization: bearer(token), ...headers } });

describe('a route with tenantTypes: [orgtenant]', () => {
  it('admits an s.token tenant token and refuses a personal one with 403 forbidden', async () => {
    expect((await get('/org-only/x', s.token)).status).toBe(200);
    const before = s.up.echo.counts.received;
    const refused = await get('/org-only/x', personal);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden' });
    expect(s.up.echo.counts.received).toBe(before);
    // Forwarded under the catch-all, but a case-insensitive upstream would read
    // it as this route's path: held to this route's types too.
    expect((await get('/ORG-ONLY/x', personal)).status).toBe(403);
    expect((await get('/other/x', personal)).status).toBe(200);
    expect((await get('/anyone/x', personal)).status).toBe(200);
  });

  it('forward-auth gives the same verdicts', async () => {
    const verify = (token: string) =>
      get('/auth/verify', token, { 'x-original-uri': '/org-only/x', 'x-original-method': 'GET' });
    expect((await verify(s.token)).status).toBe(200);
    const refused = await verify(personal);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden' });
  });

  it('a WebSocket upgrade with a personal token is refused with 403 before the upstream', async () => {
    const before = s.up.echo.counts.received;
    const head = await rawUpgrade(
      s.fx.gw.url,
      '/org-only/live',
      [`Authorization: ${bearer(personal)}`],
      'close',
    );
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(head).toContain('"forbidden"');
    expect(s.up.echo.counts.received).toBe(before);
  });
});

describe('a route without upstream (forward-auth only)', () => {
  it('verifies on /auth/verify with its tenant rule, and is never proxied by the gateway (404)', async () => {
    const verify = (tenant: string) =>
      get('/auth/verify', s.token, {
        'x-original-uri': '/ingress-only/x',
        'x-original-method': 'GET',
        'x-tenant-id': tenant,
      });
    expect((await verify('acme')).status).toBe(200);
    const mismatch = await verify('globex');
    expect(mismatch.status).toBe(403);
    expect(await mismatch.json()).toMatchObject({ error: 'tenant_mismatch' });
    const proxied = await get('/ingress-only/x', s.token, { 'x-tenant-id': 'acme' });
    expect(proxied.status).toBe(404);
    expect(await proxied.json()).toMatchObject({ error: 'not_found' });
  });
});
