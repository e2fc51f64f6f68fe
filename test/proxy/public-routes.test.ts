/**
 * Issue 15: `routes[].auth: none` — a public route. No token needed; the
 * identity headers are still stripped so nobody can spoof them, and set
 * when a valid bearer comes anyway; an invalid bearer is refused (401). A
 * spelling a permissive upstream would read as a protected route's path
 * still needs the token.
 */
import { describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE } from '../support/identity-fixture.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream, startWebSocketUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream, ws: startWebSocketUpstream },
  ({ echo, ws }) => ({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      // Its upstream checks a Basic login of its own: it asks for Authorization.
      { prefix: '/orders/public', upstream: echo.url, auth: 'none', stripAuthorization: false },
      { prefix: '/live-public', upstream: ws.url, auth: 'none' },
      { prefix: '/', upstream: echo.url, auth: 'none' },
    ],
  }),
  { token: true },
);

const SPOOFED = {
  'x-user-id': 'u-admin',
  'x-tenant-id': 'globex',
  'x-tenant-type': 'orgtenant',
  'x-user-email': 'admin@example.com',
};

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.fx.gw.url}${path}`, { headers });
  const body =
    res.status === 200 ? ((await res.json()) as { headers: Record<string, string> }) : undefined;
  return {
    status: res.status,
    headers: body?.headers,
    error:
      body === undefined
        ? ((await res.json().catch(() => ({}))) as { error?: string }).error
        : undefined,
  };
}

describe('a public route (auth: none)', () => {
  it('forwards without a token, with every identity header stripped', async () => {
    const res = await get('/orders/public/menu', SPOOFED);
    expect(res.status).toBe(200);
    for (const name of Object.keys(SPOOFED)) expect(res.headers?.[name]).toBeUndefined();
    expect(res.headers?.['x-request-id']).toMatch(/\S/);
  });

  it('injects the identity when a valid bearer comes anyway, and refuses an invalid one (401)', async () => {
    const withToken = await get('/orders/public/menu', {
      ...SPOOFED,
      authorization: bearer(s.token),
    });
    expect(withToken.status).toBe(200);
    expect(withToken.headers?.['x-tenant-id']).toBe('acme');
    expect(withToken.headers?.['x-user-email']).toBe(ALICE.email);
    const bad = await get('/orders/public/menu', { authorization: 'Bearer not-a-token' });
    expect(bad.status).toBe(401);
    expect(bad.error).toBe('invalid_token');
  });

  it("passes another scheme (the upstream's own Basic) through, anonymously, where the route keeps Authorization", async () => {
    const res = await get('/orders/public/menu', { authorization: basic('u', 'p') });
    expect(res.status).toBe(200);
    expect(res.headers?.authorization).toBe(basic('u', 'p'));
    expect(res.headers?.['x-user-id']).toBeUndefined();
    // Any other public route strips it, as every route does by default.
    const stripped = await get('/elsewhere', { authorization: basic('u', 'p') });
    expect(stripped.status).toBe(200);
    expect(stripped.headers?.authorization).toBeUndefined();
  });

  it('the protected prefix around it still needs the token, in every spelling', async () => {
    const before = s.up.echo.counts.received;
    expect((await get('/orders/42')).status).toBe(401);
    // Under the public catch-all as written, under /orders for a case-insensitive upstream.
    expect((await get('/ORDERS/42')).status).toBe(401);
    expect((await get('/Orders;x=1/42')).status).toBe(401);
    expect(s.up.echo.counts.received).toBe(before);
    expect(
      (await get('/ORDERS/42', { authorization: bearer(s.token), 'x-tenant-id': 'acme' })).status,
    ).toBe(200);
    expect((await get('/elsewhere')).status).toBe(200);
  });

  it('forward-auth: 200 with empty identity headers for a public path, 401 for a protected one', async () => {
    const verify = (uri: string) =>
      fetch(`${s.fx.gw.url}/auth/verify`, {
        headers: { 'x-original-uri': uri, 'x-original-method': 'GET', ...SPOOFED },
      });
    const open = await verify('/orders/public/menu');
    expect(open.status).toBe(200);
    expect(open.headers.get('x-user-id')).toBe('');
    expect(open.headers.get('x-tenant-id')).toBe('');
    expect((await verify('/orders/42')).status).toBe(401);
  });

  it('a WebSocket upgrade without a token is forwarded, identity stripped', async () => {
    const head = await rawUpgrade(s.fx.gw.url, '/live-public/feed', ['X-User-Id: u-admin'], 'head');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
    expect(s.up.ws.upgradeUrls.at(-1)).toBe('/live-public/feed');
    expect(s.up.ws.upgrades.at(-1)?.['x-user-id']).toBeUndefined();
  });
});
