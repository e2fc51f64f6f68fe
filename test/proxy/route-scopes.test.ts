/**
 * Issue 32, item 4: roles → scopes, and the scopes a route requires per
 * method. A user token carries its role's scopes (`scope`, sorted); a route
 * asks for them per method (`GET`, `*` for any other, HEAD as GET); a token
 * without them gets 403 `insufficient_scope` with the RFC 6750 §3.1
 * challenge — proxied, as a WebSocket upgrade and on `/auth/verify` alike,
 * with the same status, code, challenge, log reason, principal and metric.
 * The upstream gets the granted scopes in `X-Scope`, a client's copy
 * stripped. On the memory store: the store is not the subject.
 */
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/index.js';
import { entryWays } from '../support/entry-ways.js';
import { expectError } from '../support/expect-error.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, basic, bearer } from '../support/gateway.js';
import { BOB, tokenFor } from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startEchoUpstream } from '../support/upstream.js';

const WRITE_CHALLENGE = 'Bearer error="insufficient_scope", scope="catalog:write"';
const OPS_CHALLENGE = 'Bearer error="insufficient_scope", scope="ops:deploy ops:run"';

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    authorization: {
      roles: { admin: ['catalog:write', 'catalog:read'], member: ['catalog:read'] },
    },
    routes: [
      {
        prefix: '/catalog',
        upstream: echo.url,
        scopes: { GET: ['catalog:read'], '*': ['catalog:write'] },
      },
      // Nobody's role grants these: refused to all, every way alike.
      { prefix: '/ops', upstream: echo.url, scopes: { '*': ['ops:run', 'ops:deploy'] } },
      { prefix: '/drafts', upstream: echo.url, scopes: { DELETE: ['catalog:write'] } },
      { prefix: '/open', upstream: echo.url },
      { prefix: '/', upstream: echo.url },
    ],
  }),
  {
    logged: true,
    token: true,
  },
);
/** Alice is acme's admin (its creator), Bob a member. */
let admin: { access_token: string; [k: string]: unknown };
let member: { access_token: string; [k: string]: unknown };
beforeAll(async () => {
  admin = s.grant as typeof admin;
  member = await tokenFor(s.gw.url, BOB, 'acme');
});

const call = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${s.gw.url}${path}`, {
    ...init,
    headers: { authorization: bearer(token), ...(init.headers as Record<string, string>) },
  });

async function echoed(res: Response): Promise<Record<string, string | undefined>> {
  expect(res.status).toBe(200);
  return ((await res.json()) as { headers: Record<string, string | undefined> }).headers;
}

describe('the token carries its role’s scopes', () => {
  it('sorted and space-separated, in the token response and in the JWT', () => {
    expect(admin['scope']).toBe('catalog:read catalog:write');
    expect(member['scope']).toBe('catalog:read');
    const claims = JSON.parse(
      Buffer.from(member.access_token.split('.')[1] as string, 'base64url').toString(),
    ) as { scope?: unknown };
    expect(claims.scope).toBe('catalog:read');
  });

  it('a member cannot gain scopes by asking: a `scope` parameter is ignored', async () => {
    const res = await fetch(`${s.gw.url}/1/token?tenant_id=acme&scope=catalog:write%20ops:run`, {
      headers: { authorization: basic(BOB.email, BOB.password) },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { scope: string; access_token: string };
    expect(body.scope).toBe('catalog:read');
    await expectError(
      await call('/catalog/items', body.access_token, { method: 'POST' }),
      403,
      'insufficient_scope',
    );
  });

  it('the role is the tenant’s: Bob, a member of acme, is the admin of globex (its creator)', async () => {
    const globex = await tokenFor(s.gw.url, BOB, 'globex');
    expect(globex['scope']).toBe('catalog:read catalog:write');
    const res = await call('/open/x', globex.access_token);
    expect((await echoed(res))['x-scope']).toBe('catalog:read catalog:write');
  });
});

describe('the `scope` claim', () => {
  /** The member's token with claims replaced, signed with the gateway's own key. */
  const forged = (overrides: Record<string, unknown>) => {
    const claims = JSON.parse(
      Buffer.from(member.access_token.split('.')[1] as string, 'base64url').toString(),
    ) as Record<string, unknown>;
    return new SignJWT({ ...claims, ...overrides })
      .setProtectedHeader({ alg: 'EdDSA', kid: s.fx.keys.kid, typ: 'at+jwt' })
      .sign(createPrivateKey(s.fx.keys.pem));
  };

  it('is read as a space-separated list: unsorted or repeated, the same scopes', async () => {
    const token = await forged({ scope: 'catalog:write  catalog:read catalog:write' });
    const headers = await echoed(await call('/catalog/items', token));
    expect(headers['x-scope']).toBe('catalog:read catalog:write');
  });

  it('of another type than a string refuses the token (invalid_token), never grants', async () => {
    const token = await forged({ scope: ['catalog:write'] });
    await expectError(await call('/open/x', token), 401, 'invalid_token');
  });

  it('absent (a token from before scopes): no scopes', async () => {
    const token = await forged({ scope: undefined });
    expect((await echoed(await call('/open/x', token)))['x-scope']).toBe('');
    await expectError(await call('/catalog/items', token), 403, 'insufficient_scope');
  });
});

describe('a route’s scopes, per method', () => {
  it('GET needs the read scope: the member passes, and the upstream sees X-Scope', async () => {
    const headers = await echoed(
      await call('/catalog/items', member.access_token, {
        headers: { 'X-Scope': 'catalog:write' },
      }),
    );
    // The client's copy is stripped, in every spelling; the granted scopes injected.
    expect(headers['x-scope']).toBe('catalog:read');
  });

  it('a spoofed X-Scope in another spelling is stripped too', async () => {
    const headers = await echoed(
      await call('/catalog/items', member.access_token, { headers: { x_scope: 'catalog:write' } }),
    );
    expect(headers['x_scope']).toBeUndefined();
    expect(headers['x-scope']).toBe('catalog:read');
  });

  it('HEAD needs what GET needs', async () => {
    const res = await call('/catalog/items', member.access_token, { method: 'HEAD' });
    expect(res.status).toBe(200);
  });

  it('any other method falls to "*": the member is refused with the RFC 6750 challenge', async () => {
    const received = s.up.echo.counts.received;
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call('/catalog/items', member.access_token, { method, body: '{}' });
      await expectError(res, 403, 'insufficient_scope');
      expect(res.headers.get('www-authenticate')).toBe(WRITE_CHALLENGE);
    }
    expect(s.up.echo.counts.received).toBe(received);
  });

  it('the admin’s write scope passes every method', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await call('/catalog/items', admin.access_token, {
        method,
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status, method).toBe(200);
      expect((await res.json()) as unknown).toMatchObject({ method });
    }
  });

  it('a method under neither its name nor "*" needs nothing', async () => {
    expect((await call('/drafts/1', member.access_token)).status).toBe(200);
    const res = await call('/drafts/1', member.access_token, { method: 'DELETE' });
    await expectError(res, 403, 'insufficient_scope');
    expect(res.headers.get('www-authenticate')).toBe(WRITE_CHALLENGE);
  });

  it('a path a permissive upstream reads as the route’s is under its scopes too', async () => {
    const res = await call('/CATALOG/items', member.access_token, { method: 'POST', body: '{}' });
    await expectError(res, 403, 'insufficient_scope');
  });
});

describe('forward-auth reads the original method', () => {
  const verify = (token: string, headers: Record<string, string>) =>
    fetch(`${s.gw.url}/auth/verify`, {
      headers: { authorization: bearer(token), 'x-original-uri': '/catalog/items', ...headers },
    });

  it('GET: 200 with the granted scopes in X-Scope', async () => {
    const res = await verify(member.access_token, { 'x-original-method': 'GET' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-scope')).toBe('catalog:read');
  });

  it('POST: the same refusal and challenge as the proxy, for the ingress to pass on', async () => {
    for (const name of ['x-original-method', 'x-forwarded-method']) {
      const res = await verify(member.access_token, { [name]: 'POST' });
      await expectError(res, 403, 'insufficient_scope');
      expect(res.headers.get('www-authenticate')).toBe(WRITE_CHALLENGE);
    }
  });

  it('a second method header a client adds is read too: every method named must pass', async () => {
    const res = await verify(member.access_token, {
      'x-original-method': 'GET',
      'x-forwarded-method': 'POST',
    });
    await expectError(res, 403, 'insufficient_scope');
    const lower = await verify(member.access_token, { 'x-forwarded-method': 'post' });
    await expectError(lower, 403, 'insufficient_scope');
  });

  it('Envoy (the original path appended): the verify request’s own method', async () => {
    const envoy = (method: string) =>
      fetch(`${s.gw.url}/auth/verify/catalog/items`, {
        method,
        headers: { authorization: bearer(member.access_token) },
      });
    expect((await envoy('GET')).status).toBe(200);
    await expectError(await envoy('POST'), 403, 'insufficient_scope');
  });
});

const ways = entryWays(s);

describe('one check, three ways: a scope no role grants', () => {
  it.each([
    ['a proxied request', ways.proxied, '/ops'],
    ['a WebSocket upgrade', ways.upgrade, '/ops'],
    ['forward-auth', ways.forwardAuth, 'forward-auth'],
  ] as const)('refuses %s alike: status, code, challenge, log, metric', async (_n, way, route) => {
    const counted = async () =>
      total(await scrape(adminUrlOf(s.gw)), 'tenant_gateway_requests_total', {
        route,
        reason: 'insufficient_scope',
        principal: 'user',
      });
    const before = await counted();
    const received = s.up.echo.counts.received;

    const answer = await way('/ops/ws', { authorization: bearer(admin.access_token) });

    expect(answer.status).toBe(403);
    expect(answer.code).toBe('insufficient_scope');
    expect(answer.challenge).toBe(OPS_CHALLENGE);
    // Logged with whom it refused, as a tenant mismatch is.
    expect(answer.line).toMatchObject({
      status: 403,
      outcome: 'refused',
      reason: 'insufficient_scope',
      route,
      tenantId: 'acme',
      userId: admin['user_id'],
    });
    expect(await counted()).toBe(before + 1);
    expect(s.up.echo.counts.received).toBe(received);
  });
});

describe('config problems', () => {
  const problemsOf = (text: string): string[] => {
    try {
      parseConfigText(text, '/etc/tenant-gateway/gateway.yaml', {});
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error(`expected a ConfigError for:\n${text}`);
  };

  it('refuses a scope name outside RFC 6749 §3.3, a lower-case method and an empty map', () => {
    const problems = problemsOf(`
routes:
  - { prefix: /a, upstream: "http://a:1", scopes: { GET: ["catalog read"], post: [x] } }
  - { prefix: /b, upstream: "http://b:1", scopes: {} }
authorization:
  roles: { admin: ['say"what'], member: ['back\\\\slash'] }
`);
    expect(problems.join('\n')).toMatch(/routes\[0\]\.scopes\.GET\[0\]: must be an OAuth scope/);
    expect(problems.join('\n')).toMatch(/routes\[0\]\.scopes\.post.*HTTP method in capitals/);
    expect(problems.join('\n')).toMatch(/routes\[1\]\.scopes: must name at least one method/);
    expect(problems.join('\n')).toMatch(/authorization\.roles\.admin\[0\]: must be an OAuth scope/);
    expect(problems.join('\n')).toMatch(
      /authorization\.roles\.member\[0\]: must be an OAuth scope/,
    );
  });

  it('refuses scopes on a public route: nothing there needs a token', () => {
    const problems = problemsOf(`
routes:
  - { prefix: /a, upstream: "http://a:1", auth: none, scopes: { GET: [catalog:read] } }
`);
    expect(problems).toEqual([
      expect.stringMatching(/^routes\[0\]\.scopes: needs a token: a public route/),
    ]);
  });

  it('refuses, with clientScopes set, a route scope no role and no client can ever hold', () => {
    const problems = problemsOf(`
routes:
  - { prefix: /a, upstream: "http://a:1", scopes: { GET: [catalog:read], "*": [catalog:wirte] } }
authorization:
  roles: { admin: [catalog:write], member: [catalog:read] }
  clientScopes: [catalog:read]
`);
    expect(problems).toEqual([
      expect.stringMatching(/^routes\[0\]\.scopes\.\*\[0\]: catalog:wirte is granted by no role/),
    ]);
  });
});
