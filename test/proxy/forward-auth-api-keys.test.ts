/**
 * Issue 42, finding 10 with forward-auth: the ingress forwards the ORIGINAL
 * request to the service, so an API key (`tgk_…`) the client sent would reach
 * it unless the ingress overwrites `Authorization` and `X-API-Key`. The
 * nginx and Caddy blocks of docs/forward-auth.md, run as written in a real
 * nginx and a real Caddy in front of a real gateway (only the ports moved),
 * pass on requests admitted by a key with no `tgk_` value in any header the
 * recording service receives, while a bearer token crosses as before (nginx
 * keeps it, Caddy's block removes it as it always did).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCaddy, type TestCaddy } from '../support/caddy.js';
import { bearer } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE } from '../support/identity-fixture.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import { startNginx, type TestNginx } from '../support/nginx.js';
import { startRecordingUpstream } from '../support/recording-upstream.js';

const FORWARD_AUTH = readFileSync(new URL('../../docs/forward-auth.md', import.meta.url), 'utf8');

/** The one fenced block of `lang` in the `## heading` section of docs/forward-auth.md. */
function docsBlock(heading: string, lang: string): string {
  const start = FORWARD_AUTH.indexOf(`\n## ${heading}\n`);
  expect(start).toBeGreaterThan(0);
  const end = FORWARD_AUTH.indexOf('\n## ', start + 1);
  const section = FORWARD_AUTH.slice(start, end < 0 ? undefined : end);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section)?.[1];
  expect(block).toBeDefined();
  return block as string;
}

const s = fixtureSuite(
  { upstream: startRecordingUpstream },
  () => ({
    trustedProxies: ['127.0.0.1'],
    apiKeys: { enabled: true },
    routes: [
      { prefix: '/orders', tenant: { path: '/orders/:tenant_id' } },
      { prefix: '/open', auth: 'none' },
    ],
  }),
  { token: true },
);
let nginx: TestNginx;
let caddy: TestCaddy;
let apiKey: string;

beforeAll(async () => {
  const { clientId } = await makeClient(s.fx.gw.gateway.store, 'acme', []);
  apiKey = (await makeApiKey(s.fx.gw.gateway.store, clientId)).apiKey;
  const ports = (block: string) =>
    block
      .replaceAll('127.0.0.1:8080', s.fx.gw.url.replace('http://', ''))
      .replaceAll('127.0.0.1:9001', s.up.upstream.url.replace('http://', ''));
  [nginx, caddy] = await Promise.all([
    startNginx(ports(docsBlock('nginx (`auth_request`)', 'nginx'))),
    startCaddy(ports(docsBlock('Caddy (`forward_auth`)', 'caddy'))),
  ]);
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await caddy?.stop();
});

/** The headers the service received for one GET of `path` through `proxyPort`. */
async function received(
  proxyPort: number,
  path: string,
  headers: Record<string, string>,
): Promise<Record<string, string | string[] | undefined>> {
  const before = s.up.upstream.requests.length;
  const res = await fetch(`http://127.0.0.1:${proxyPort}${path}`, { headers });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  expect(s.up.upstream.requests.length).toBe(before + 1);
  return (s.up.upstream.requests.at(-1) as { headers: Record<string, string> }).headers;
}

/** Every header name and value the service received, as one text. */
const wire = (headers: Record<string, unknown>): string => JSON.stringify(headers);

const proxies = [
  ['nginx', () => nginx.port],
  ['Caddy', () => caddy.port],
] as const;

describe.each(proxies)('behind %s as docs/forward-auth.md configures it', (_, port) => {
  it('a request admitted by `Authorization: Bearer tgk_…` reaches the service without the key', async () => {
    const seen = await received(port(), '/orders/acme/1', { authorization: bearer(apiKey) });
    expect(seen['x-tenant-id']).toBe('acme');
    expect(seen['x-client-id']).toMatch(/^tgc_/);
    expect(seen.authorization).toBeUndefined();
    expect(wire(seen)).not.toContain('tgk_');
  });

  it('a request admitted by `X-API-Key: tgk_…` reaches the service without the key', async () => {
    const seen = await received(port(), '/orders/acme/2', { 'x-api-key': apiKey });
    expect(seen['x-tenant-id']).toBe('acme');
    expect(seen['x-api-key']).toBeUndefined();
    expect(wire(seen)).not.toContain('tgk_');
  });

  it('a key under another scheme (`Authorization: Token tgk_…`) on a public route does not cross', async () => {
    const seen = await received(port(), '/open/3', {
      authorization: `Token ${apiKey}`,
      'x-api-key': apiKey,
    });
    expect(seen.authorization).toBeUndefined();
    expect(seen['x-api-key']).toBeUndefined();
    expect(wire(seen)).not.toContain('tgk_');
  });

  it('a bearer JWT still admits as before, the identity headers set', async () => {
    const seen = await received(port(), '/orders/acme/4', { authorization: bearer(s.token) });
    expect(seen['x-tenant-id']).toBe('acme');
    expect(seen['x-user-email']).toBe(ALICE.email);
  });
});

describe('the bearer token after the verdict', () => {
  it('nginx passes it on as before (the verdict answers it as sent); Caddy removes it as before', async () => {
    expect(
      (await received(nginx.port, '/orders/acme/5', { authorization: bearer(s.token) }))
        .authorization,
    ).toBe(bearer(s.token));
    expect(
      (await received(caddy.port, '/orders/acme/6', { authorization: bearer(s.token) }))
        .authorization,
    ).toBeUndefined();
  });

  it('a refused key is refused through the proxy (the service never sees it)', async () => {
    const before = s.up.upstream.requests.length;
    const res = await fetch(`http://127.0.0.1:${nginx.port}/orders/globex/7`, {
      headers: { 'x-api-key': apiKey },
    });
    expect(res.status).toBe(403);
    expect(s.up.upstream.requests.length).toBe(before);
  });
});
