/**
 * One end-to-end test per row of DESIGN §1's endpoint table (the identity
 * endpoints), against a real gateway on the in-memory store, over real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { basic, bearer } from '../support/gateway.js';
import {
  expectBasicChallenge,
  expectBearerChallenge,
  expectNoCredentialsChallenge,
  expectError,
} from '../support/expect-error.js';
import { changePassword, signUp } from '../support/account-requests.js';

const s = fixtureSuite({}, () => ({}));

const asAlice = { authorization: basic(ALICE.email, ALICE.password) };

describe('GET /1/users/{user_id}/tenants', () => {
  it('lists the tenants of the Basic-authenticated user, by id and as current', async () => {
    const res = await fetch(`${s.gw.url}/1/users/current/tenants`, { headers: asAlice });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as {
      tenants: { tenant_id: string; type: string; name: string }[];
    };
    const acme = body.tenants.find((t) => t.tenant_id === 'acme');
    expect(acme).toEqual({ tenant_id: 'acme', type: 'orgtenant', name: 'Acme' });
    const personal = body.tenants.filter((t) => t.type === 'usertenant');
    expect(personal).toHaveLength(1);
    expect(personal[0]?.name).toBe('Alice');
    expect(body.tenants.map((t) => t.tenant_id)).not.toContain('globex');

    const token = await tokenFor(s.gw.url, ALICE, 'acme');
    const byId = await fetch(`${s.gw.url}/1/users/${token.user_id as string}/tenants`, {
      headers: asAlice,
    });
    expect(byId.status).toBe(200);
    expect(await byId.json()).toEqual(body);
  });

  it("refuses another user's path with 403 forbidden", async () => {
    const bobs = await tokenFor(s.gw.url, BOB, 'globex');
    const res = await fetch(`${s.gw.url}/1/users/${bobs.user_id as string}/tenants`, {
      headers: asAlice,
    });
    await expectError(res, 403, 'forbidden');
  });

  it('refuses a wrong password with 401 invalid_credentials and a Basic challenge', async () => {
    const res = await fetch(`${s.gw.url}/1/users/current/tenants`, {
      headers: { authorization: basic(ALICE.email, 'wrong-password') },
    });
    await expectError(res, 401, 'invalid_credentials');
    expectBasicChallenge(res);
  });
});

describe('GET /1/token and /1/oauth/token', () => {
  it.each(['/1/token', '/1/oauth/token'])(
    '%s issues a token response with no-store',
    async (path) => {
      const res = await fetch(`${s.gw.url}${path}?tenant_id=acme`, { headers: asAlice });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        token_type: 'Bearer',
        expires_in: 600,
        user_email: ALICE.email,
        tenant_id: 'acme',
        tenant_name: 'Acme',
        tenant_type: 'orgtenant',
      });
      expect(body.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(body.user_id).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it('accepts the e-mail in any letter case', async () => {
    const res = await fetch(`${s.gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic('ALICE@Example.COM', ALICE.password) },
    });
    expect(res.status).toBe(200);
  });

  it('issues for the personal tenant', async () => {
    const list = await fetch(`${s.gw.url}/1/users/current/tenants`, { headers: asAlice });
    const { tenants } = (await list.json()) as { tenants: { tenant_id: string; type: string }[] };
    const personal = tenants.find((t) => t.type === 'usertenant')!;
    const token = await tokenFor(s.gw.url, ALICE, personal.tenant_id);
    expect(token.tenant_type).toBe('usertenant');
  });

  it.each([
    ['missing', ''],
    ['empty', '?tenant_id='],
    ['repeated', '?tenant_id=acme&tenant_id=acme'],
  ])('tenant_id %s → 400 invalid_request', async (_case, query) => {
    const res = await fetch(`${s.gw.url}/1/token${query}`, { headers: asAlice });
    await expectError(res, 400, 'invalid_request');
  });

  it('a tenant the user is not a member of, and one that does not exist, get the same 403', async () => {
    const notMember = await fetch(`${s.gw.url}/1/token?tenant_id=globex`, { headers: asAlice });
    const missing = await fetch(`${s.gw.url}/1/token?tenant_id=no-such-tenant`, {
      headers: asAlice,
    });
    const a = await expectError(notMember, 403, 'tenant_access_denied');
    const b = await expectError(missing, 403, 'tenant_access_denied');
    expect(a).toEqual(b);
  });
});

describe('GET /1/tenants/{tenant_id}', () => {
  it('returns the full tenant record, by id and as current', async () => {
    const { access_token } = await tokenFor(s.gw.url, ALICE, 'acme');
    for (const id of ['acme', 'current']) {
      const res = await fetch(`${s.gw.url}/1/tenants/${id}`, {
        headers: { authorization: bearer(access_token) },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        tenant_id: 'acme',
        type: 'orgtenant',
        name: 'Acme',
        cloud_region: 'eu-west-1',
        created_by: ALICE.email,
      });
      expect(Number.isInteger(body.created_at)).toBe(true);
      expect(Number.isInteger(body.modified_at)).toBe(true);
      expect(body.modified_at as number).toBeGreaterThanOrEqual(body.created_at as number);
    }
  });

  it("names another tenant than the token's → 403 tenant_mismatch", async () => {
    const { access_token } = await tokenFor(s.gw.url, BOB, 'acme');
    const res = await fetch(`${s.gw.url}/1/tenants/globex`, {
      headers: { authorization: bearer(access_token) },
    });
    await expectError(res, 403, 'tenant_mismatch');
  });

  it('without a bearer token → 401 invalid_token with a Bearer challenge naming no error', async () => {
    const res = await fetch(`${s.gw.url}/1/tenants/acme`);
    await expectError(res, 401, 'invalid_token');
    expectNoCredentialsChallenge(res);
  });
});

describe('POST /1/users (signup)', () => {
  const signup = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.gw.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('creates the user with a personal tenant and can log in at once', async () => {
    const res = await signup({
      email: 'Carol@Example.com',
      password: 'carol-password',
      name: 'Carol',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { user_id: string; user_email: string; tenant_id: string };
    expect(body.user_email).toBe('carol@example.com');
    expect(body.user_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.tenant_id).toMatch(/^[0-9a-f-]{36}$/);
    const token = await tokenFor(
      s.gw.url,
      { email: 'carol@example.com', password: 'carol-password' },
      body.tenant_id,
    );
    expect(token).toMatchObject({
      user_id: body.user_id,
      tenant_type: 'usertenant',
      tenant_name: 'Carol',
    });
  });

  it('an e-mail already registered (any case) → 409 user_exists', async () => {
    await expectError(
      await signup({ email: 'ALICE@example.com', password: 'whatever-123' }),
      409,
      'user_exists',
    );
  });

  it.each([
    ['bad JSON', '{"email":'],
    ['not an object', '[1,2]'],
    ['bad e-mail', { email: 'not-an-email', password: 'long-enough-1' }],
    ['short password', { email: 'd@example.com', password: 'short' }],
    ['73-byte password', { email: 'd@example.com', password: 'x'.repeat(73) }],
    [
      'password of 8 chars but multi-byte over 72 bytes',
      { email: 'd@example.com', password: 'é'.repeat(37) },
    ],
    ['missing password', { email: 'd@example.com' }],
    ['unknown field', { email: 'd@example.com', password: 'long-enough-1', admin: true }],
    ['empty body', ''],
  ])('%s → 400 invalid_request', async (_case, body) => {
    await expectError(await signup(body), 400, 'invalid_request');
  });

  it('a body over limits.bodyBytes → 413 payload_too_large', async () => {
    const res = await signup({
      email: 'e@example.com',
      password: 'long-enough-1',
      name: 'n'.repeat(40_000),
    });
    await expectError(res, 413, 'payload_too_large');
  });
});

describe('PUT /1/users/{user_id}/password', () => {
  it('changes the password (204) and every earlier token stops working at once', async () => {
    const dave = { email: 'dave@example.com', password: 'dave-password-1' };
    const created = await signUp(s.gw.url, dave);
    const { tenant_id } = (await created.json()) as { tenant_id: string };
    const old = await tokenFor(s.gw.url, dave, tenant_id);
    const before = await fetch(`${s.gw.url}/1/tenants/current`, {
      headers: { authorization: bearer(old.access_token) },
    });
    expect(before.status).toBe(200);

    const res = await changePassword(s.gw.url, dave, 'dave-password-2');
    expect(res.status).toBe(204);

    const after = await fetch(`${s.gw.url}/1/tenants/current`, {
      headers: { authorization: bearer(old.access_token) },
    });
    await expectError(after, 401, 'invalid_token');
    const oldLogin = await fetch(`${s.gw.url}/1/token?tenant_id=${tenant_id}`, {
      headers: { authorization: basic(dave.email, dave.password) },
    });
    await expectError(oldLogin, 401, 'invalid_credentials');
    const fresh = await tokenFor(s.gw.url, { ...dave, password: 'dave-password-2' }, tenant_id);
    const ok = await fetch(`${s.gw.url}/1/tenants/current`, {
      headers: { authorization: bearer(fresh.access_token) },
    });
    expect(ok.status).toBe(200);
  });

  it("refuses a password outside 8..72 bytes and another user's path", async () => {
    const bad = await fetch(`${s.gw.url}/1/users/current/password`, {
      method: 'PUT',
      headers: { ...asAlice, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'short' }),
    });
    await expectError(bad, 400, 'invalid_request');
    const bobs = await tokenFor(s.gw.url, BOB, 'acme');
    const other = await fetch(`${s.gw.url}/1/users/${bobs.user_id as string}/password`, {
      method: 'PUT',
      headers: { ...asAlice, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'taken-over-1' }),
    });
    await expectError(other, 403, 'forbidden');
    // Alice's password is unchanged.
    expect((await tokenFor(s.gw.url, ALICE, 'acme')).tenant_id).toBe('acme');
  });
});

describe('DELETE /1/token', () => {
  it('revokes that token (204) and only that one', async () => {
    const first = await tokenFor(s.gw.url, ALICE, 'acme');
    const second = await tokenFor(s.gw.url, ALICE, 'acme');
    const res = await fetch(`${s.gw.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(first.access_token) },
    });
    expect(res.status).toBe(204);
    const revoked = await fetch(`${s.gw.url}/1/tenants/current`, {
      headers: { authorization: bearer(first.access_token) },
    });
    const body = await expectError(revoked, 401, 'invalid_token');
    expect(body.error_description).toMatch(/revoked/);
    expectBearerChallenge(revoked);
    const other = await fetch(`${s.gw.url}/1/tenants/current`, {
      headers: { authorization: bearer(second.access_token) },
    });
    expect(other.status).toBe(200);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the public key with its kid and nothing private', async () => {
    const res = await fetch(`${s.gw.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    const { keys } = (await res.json()) as { keys: Record<string, string>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      kid: s.fx.keys.kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    expect(keys[0]).not.toHaveProperty('d');
  });
});

describe('anything else', () => {
  it('no such endpoint and no route → 404 not_found, with the request id echoed', async () => {
    const res = await fetch(`${s.gw.url}/nothing/here`, { headers: { 'x-request-id': 'req-123' } });
    expect(res.headers.get('x-request-id')).toBe('req-123');
    await expectError(res, 404, 'not_found');
    await expectError(await fetch(`${s.gw.url}/1/nothing`), 404, 'not_found');
  });

  it('a wrong method on a known path → 405 with Allow', async () => {
    const res = await fetch(`${s.gw.url}/1/token`, { method: 'PATCH' });
    expect(res.headers.get('allow')).toContain('GET');
    await expectError(res, 405, 'method_not_allowed');
  });
});
