/**
 * Secrets never reach the logs: after logins (good and bad), token requests,
 * signups, password changes, proxied requests and failures, the captured log
 * holds no password, token or Authorization value — and it does hold the
 * access log fields operators rely on.
 */
import { PassThrough } from 'node:stream';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let fx: IdentityFixture;
let gw: TestGateway;
let upstream: Upstream;
const lines: string[] = [];

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [{ prefix: '/api', upstream: upstream.url }],
  });
  const capture = new PassThrough();
  capture.setEncoding('utf8');
  capture.on('data', (chunk: string) => lines.push(...chunk.split('\n').filter((l) => l !== '')));
  gw = await startTestGateway(fx.config, { logTo: capture });
});
afterAll(async () => {
  await gw.close();
  await fx.close();
  await upstream.close();
});

it('no password, token, cookie or Authorization value appears in the log', async () => {
  const secrets = [ALICE.password, 'wrong-password-9', 'new-secret-password-7', 'carol-password-5'];
  const url = gw.url;
  const { access_token } = await tokenFor(url, ALICE, 'acme');
  secrets.push(access_token);
  await fetch(`${url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(ALICE.email, 'wrong-password-9') },
  });
  await fetch(`${url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: 'session=cookie-secret-3' },
    body: JSON.stringify({ email: 'carol@example.com', password: 'carol-password-5' }),
  });
  secrets.push('cookie-secret-3');
  await fetch(`${url}/api/x?access_token=${access_token}`, {
    headers: { authorization: bearer(access_token), cookie: 'a=cookie-secret-3' },
  });
  await fetch(`${url}/api/x`, { headers: { authorization: bearer(`${access_token}x`) } });
  await fetch(`${url}/api/x`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from('x:leaky-basic-pass').toString('base64') },
  });
  secrets.push('leaky-basic-pass', Buffer.from('x:leaky-basic-pass').toString('base64'));
  await fetch(`${url}/1/users/current/password`, {
    method: 'PUT',
    headers: {
      authorization: basic(ALICE.email, ALICE.password),
      'content-type': 'application/json',
    },
    body: JSON.stringify({ password: 'new-secret-password-7' }),
  });
  await fetch(`${url}/1/token`, {
    method: 'DELETE',
    headers: { authorization: bearer(access_token) },
  });
  await new Promise((r) => setTimeout(r, 200));

  const log = lines.join('\n');
  expect(lines.length).toBeGreaterThan(8);
  for (const secret of secrets) expect(log).not.toContain(secret);
  expect(log.toLowerCase()).not.toMatch(/"authorization"\s*:\s*"(basic|bearer)/);
  // A JWT's first segment is the same for all our tokens: none may appear.
  expect(log).not.toContain(access_token.split('.')[1] as string);

  const proxied = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === 'request' && l.route === '/api' && l.status === 200);
  expect(proxied).toMatchObject({ method: 'GET', path: '/api/x', tenantId: 'acme', status: 200 });
  expect(typeof proxied?.requestId).toBe('string');
  expect(typeof proxied?.userId).toBe('string');
  expect(typeof proxied?.durationMs).toBe('number');
  expect(typeof proxied?.upstreamMs).toBe('number');
});
