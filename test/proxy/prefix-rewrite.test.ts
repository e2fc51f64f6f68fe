/**
 * Issue 15: `routes[].stripPrefix` and `routes[].rewrite.prefix` — what the
 * upstream sees instead of the public prefix. Tenant rules still read the
 * public path, and no spelling lets a request reach an upstream path outside
 * the replacement prefix.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { bearer } from '../support/gateway.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream, startWebSocketUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream, ws: startWebSocketUpstream },
  ({ echo, ws }) => ({
    routes: [
      { prefix: '/catalog', upstream: echo.url, stripPrefix: true },
      { prefix: '/shop', upstream: echo.url, rewrite: { prefix: '/v2' } },
      { prefix: '/based', upstream: `${echo.url}/base`, stripPrefix: true },
      {
        prefix: '/t',
        upstream: echo.url,
        stripPrefix: true,
        tenant: { path: '/t/tenants/:tenant_id' },
      },
      { prefix: '/live', upstream: ws.url, rewrite: { prefix: '/socket' } },
    ],
  }),
  { token: true },
);

/** The path the upstream saw for `path`, or the gateway's status when it refused. */
async function seen(path: string): Promise<string | number> {
  const res = await fetch(`${s.fx.gw.url}${path}`, { headers: { authorization: bearer(s.token) } });
  if (res.status !== 200) return res.status;
  return ((await res.json()) as { url: string }).url;
}

/** The same over a raw socket, for targets fetch would normalise itself. */
function seenRaw(target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(s.fx.gw.url).port), '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.write(
      `GET ${target} HTTP/1.1\r\nHost: gw\r\nAuthorization: ${bearer(s.token)}\r\nConnection: close\r\n\r\n`,
    );
  });
}

describe('stripPrefix and rewrite', () => {
  it.each([
    ['/catalog/items?x=1', '/items?x=1'],
    ['/catalog/items/', '/items/'],
    ['/catalog', '/'],
    ['/catalog/', '/'],
    ['/shop/items?x=1', '/v2/items?x=1'],
    ['/shop', '/v2'],
    ['/based/items', '/base/items'],
  ])('%s reaches the upstream as %s', async (path, expected) => {
    expect(await seen(path)).toBe(expected);
  });

  it('tenant rules read the public path; the upstream gets the stripped one', async () => {
    expect(await seen('/t/tenants/acme/orders')).toBe('/tenants/acme/orders');
    expect(await seen('/t/tenants/globex/orders')).toBe(403);
  });

  it('no spelling reaches a path outside the replacement prefix', async () => {
    const before = s.up.echo.requests.length;
    // Dot segments resolve before matching: /catalog/../admin is /admin, no route.
    for (const target of ['/catalog/../admin', '/catalog/%2e%2e/admin', '/shop/./../admin']) {
      expect((await seenRaw(target)).split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    }
    // Encoded slashes and backslashes are refused outright.
    for (const target of ['/catalog/..%2fadmin', '/catalog/%2e%2e%5cadmin', '/shop\\..\\admin']) {
      expect((await seenRaw(target)).split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    }
    // A longer name is not under the prefix.
    expect((await seenRaw('/catalogue/x')).split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(s.up.echo.requests.length).toBe(before);
  });

  it('a WebSocket upgrade is rewritten the same way', async () => {
    const head = await rawUpgrade(
      s.fx.gw.url,
      '/live/chat?room=1',
      [`Authorization: ${bearer(s.token)}`],
      'head',
    );
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
    expect(s.up.ws.upgradeUrls.at(-1)).toBe('/socket/chat?room=1');
  });
});
