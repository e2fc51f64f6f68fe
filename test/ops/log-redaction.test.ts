/**
 * Secrets never reach the logs: after logins (good and bad), token requests,
 * signups, password changes, proxied requests and failures, the captured log
 * holds no password, token or Authorization value — and it does hold the
 * access log fields operators rely on.
 */
import { expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { upstream: startEchoUpstream },
  ({ upstream }) => ({ routes: [{ prefix: '/api', upstream: upstream.url }] }),
  { logged: true },
);

it('no password, token, cookie or Authorization value appears in the log', async () => {
  const secrets = [ALICE.password, 'wrong-password-9', 'new-secret-password-7', 'carol-password-5'];
  const url = s.gw.url;
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

  const lines = s.text.split('\n').filter((l) => l !== '');
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
