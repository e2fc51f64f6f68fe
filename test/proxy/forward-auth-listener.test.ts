/**
 * Issue 21: forward-auth on a listener of its own (`forwardAuth`), so a
 * NetworkPolicy can let only the ingress controller reach `/auth/verify`.
 * Then the main listener no longer serves it, and the forward-auth listener
 * serves nothing else.
 */
import type { AddressInfo } from 'node:net';
import { beforeAll, expect, it } from 'vitest';
import { adminUrlOf, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { scrape, total } from '../support/prometheus-text.js';

const s = fixtureSuite(
  {},
  () => ({
    forwardAuth: { host: '127.0.0.1', port: 0 },
    routes: [{ prefix: '/orders', tenant: { header: 'X-Tenant-Id' } }],
  }),
  { token: true },
);
let verifyUrl: string;
beforeAll(() => {
  const port = (s.gw.gateway.forwardAuthServer!.address() as AddressInfo).port;
  verifyUrl = `http://127.0.0.1:${port}`;
});

const ask = (base: string, path: string, headers: Record<string, string>) =>
  fetch(`${base}${path}`, { headers: { 'x-original-uri': '/orders/1', ...headers } });

it('answers the verdict on its own listener: 200 with the identity headers, 401 and 403 as the proxy would', async () => {
  const ok = await ask(verifyUrl, '/auth/verify', {
    authorization: bearer(s.token),
    'x-tenant-id': 'acme',
  });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('x-tenant-id')).toBe('acme');
  await expectError(await ask(verifyUrl, '/auth/verify', {}), 401, 'invalid_token');
  await expectError(
    await ask(verifyUrl, '/auth/verify', {
      authorization: bearer(s.token),
      'x-tenant-id': 'globex',
    }),
    403,
    'tenant_mismatch',
  );
});

it('the main listener no longer serves /auth/verify, and the forward-auth listener serves nothing else', async () => {
  await expectError(
    await ask(s.fx.gw.url, '/auth/verify', {
      authorization: bearer(s.token),
      'x-tenant-id': 'acme',
    }),
    404,
    'not_found',
  );
  for (const path of ['/1/token?tenant_id=acme', '/.well-known/jwks.json', '/orders/1', '/metrics'])
    await expectError(
      await ask(verifyUrl, path, { authorization: bearer(s.token) }),
      404,
      'not_found',
    );
});

it('its requests are recorded under route forward-auth', async () => {
  const before = await scrape(adminUrlOf(s.fx.gw));
  await ask(verifyUrl, '/auth/verify', { authorization: bearer(s.token), 'x-tenant-id': 'acme' });
  await new Promise((r) => setTimeout(r, 50));
  const labels = { route: 'forward-auth', code: '200', outcome: 'accepted' };
  expect(
    total(await scrape(adminUrlOf(s.fx.gw)), 'tenant_gateway_requests_total', labels) -
      total(before, 'tenant_gateway_requests_total', labels),
  ).toBe(1);
});
