/**
 * The tenant admins' machine-client endpoints (`/1/tenants/{tenant_id}/clients…`)
 * on a real gateway over the memory store: who may call them (a user, admin of
 * the token's tenant now), what they answer (a secret or key once, lists
 * without secrets), and what the store keeps (digests only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretDigest } from '../../src/auth/clients/secrets.js';
import type { Store } from '../../src/store/types.js';
import {
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
  seedTokens,
} from '../support/identity-fixture.js';
import { adminCall } from '../support/admin-call.js';

let fx: IdentityFixture;
let store: Store;
/** Alice: acme's creator, so its admin. */
let aliceAcme: string;
/** Bob: a member of acme, the creator (admin) of globex. */
let bobAcme: string;
let bobGlobex: string;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({
    // An admin gives a client at most their role's scopes (∩ clientScopes).
    authorization: {
      roles: { admin: ['catalog:read', 'catalog:write', 'admin:all'], member: [] },
      clientScopes: ['catalog:read', 'catalog:write'],
    },
  });
  store = fx.gw.gateway.store;
  ({ aliceAcme, bobAcme, bobGlobex } = await seedTokens(fx.gw.url));
}, 60_000);
afterAll(() => fx.close());

const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  adminCall(fx.gw.url, method, path, token, body);

async function newClient(token = aliceAcme, tenant = 'acme', scopes = ['catalog:read']) {
  const res = await call('POST', `/1/tenants/${tenant}/clients`, token, { name: 'ci', scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { client_id: string; client_secret: string };
}

describe('an admin', () => {
  it('creates a client: its secret once, the store keeps only a digest', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const res = await call('POST', '/1/tenants/acme/clients', aliceAcme, {
      name: ' deploy bot ',
      scopes: ['catalog:write', 'catalog:read', 'catalog:read'],
      expires_at: expiresAt,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { client_id, client_secret, created_at, ...rest } = res.body;
    expect(client_id).toMatch(/^tgc_[a-z2-7]{26}$/);
    expect(client_secret).toMatch(/^tgs_[A-Za-z0-9_-]{43}$/);
    expect(typeof created_at).toBe('number');
    expect(rest).toEqual({
      name: 'deploy bot',
      scopes: ['catalog:read', 'catalog:write'],
      expires_at: expiresAt,
    });
    expect(res.headers.get('location')).toBe(`/1/tenants/acme/clients/${client_id}`);

    const stored = await store.clients.getClient(client_id);
    expect(stored?.secretDigest).toBe(secretDigest(client_secret));
    expect(JSON.stringify(stored)).not.toContain(client_secret);

    const list = await call('GET', '/1/tenants/current/clients', aliceAcme);
    expect(list.status).toBe(200);
    const listed = list.body.clients.find((c: { client_id: string }) => c.client_id === client_id);
    expect(listed).toEqual({
      client_id,
      name: 'deploy bot',
      scopes: ['catalog:read', 'catalog:write'],
      created_at,
      expires_at: expiresAt,
      rotated_at: null,
    });
    const one = await call('GET', `/1/tenants/acme/clients/${client_id}`, aliceAcme);
    expect(one.body).toEqual(listed);
    for (const text of [JSON.stringify(list.body), JSON.stringify(one.body)]) {
      expect(text).not.toContain(client_secret);
      expect(text).not.toContain(stored?.secretDigest);
      expect(text).not.toContain('secret');
    }
  });

  it('rotates a secret: a new one, once; the old digest is gone', async () => {
    const { client_id, client_secret } = await newClient();
    const res = await call('POST', `/1/tenants/acme/clients/${client_id}/secret`, aliceAcme);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.client_id).toBe(client_id);
    expect(res.body.client_secret).toMatch(/^tgs_/);
    expect(res.body.client_secret).not.toBe(client_secret);
    expect(typeof res.body.rotated_at).toBe('number');
    const stored = await store.clients.getClient(client_id);
    expect(stored?.secretDigest).toBe(secretDigest(res.body.client_secret));
  });

  it('adds, lists and removes keys; removing the client removes its keys', async () => {
    const { client_id } = await newClient();
    const keys = `/1/tenants/acme/clients/${client_id}/keys`;
    const bare = await call('POST', keys, aliceAcme);
    expect(bare.status).toBe(201);
    expect(bare.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(bare.body).sort()).toEqual([
      'api_key',
      'created_at',
      'expires_at',
      'key_id',
    ]);
    expect(bare.body.key_id).toMatch(/^tgkid_/);
    expect(bare.body.api_key).toMatch(/^tgk_/);
    expect(bare.body.expires_at).toBeNull();
    const expiresAt = Math.floor(Date.now() / 1000) + 60;
    const dated = await call('POST', keys, aliceAcme, { expires_at: expiresAt });
    expect(dated.status).toBe(201);
    expect(dated.body.expires_at).toBe(expiresAt);
    expect((await store.apiKeys.getApiKey(bare.body.key_id))?.digest).toBe(
      secretDigest(bare.body.api_key),
    );

    const list = await call('GET', keys, aliceAcme);
    expect(list.status).toBe(200);
    expect(list.body.keys.map((k: { key_id: string }) => k.key_id).sort()).toEqual(
      [bare.body.key_id, dated.body.key_id].sort(),
    );
    expect(list.body.keys[0]).toHaveProperty('last_used_at', null);
    const usedAt = Math.floor(Date.now() / 1000);
    await store.apiKeys.touchApiKey(dated.body.key_id, usedAt);
    const used = (await call('GET', keys, aliceAcme)).body.keys.find(
      (k: { key_id: string }) => k.key_id === dated.body.key_id,
    );
    expect(used.last_used_at).toBe(usedAt);
    expect(JSON.stringify(list.body)).not.toContain(bare.body.api_key);
    expect(JSON.stringify(list.body)).not.toContain(secretDigest(bare.body.api_key));

    const removed = await call('DELETE', `${keys}/${bare.body.key_id}`, aliceAcme);
    expect(removed.status).toBe(204);
    expect(await store.apiKeys.getApiKey(bare.body.key_id)).toBeNull();
    expect((await call('DELETE', `${keys}/${bare.body.key_id}`, aliceAcme)).status).toBe(404);

    const gone = await call('DELETE', `/1/tenants/acme/clients/${client_id}`, aliceAcme);
    expect(gone.status).toBe(204);
    expect(await store.clients.getClient(client_id)).toBeNull();
    expect(await store.apiKeys.getApiKey(dated.body.key_id)).toBeNull();
    expect((await call('GET', `/1/tenants/acme/clients/${client_id}`, aliceAcme)).status).toBe(404);
    expect((await call('GET', keys, aliceAcme)).status).toBe(404);
  });
});

describe('refused', () => {
  it('a member (403 forbidden), whatever the operation', async () => {
    const { client_id } = await newClient();
    const paths: [string, string, unknown?][] = [
      ['GET', '/1/tenants/acme/clients'],
      ['POST', '/1/tenants/acme/clients', { name: 'mine', scopes: [] }],
      ['GET', `/1/tenants/acme/clients/${client_id}`],
      ['DELETE', `/1/tenants/acme/clients/${client_id}`],
      ['POST', `/1/tenants/acme/clients/${client_id}/secret`],
      ['GET', `/1/tenants/acme/clients/${client_id}/keys`],
      ['POST', `/1/tenants/acme/clients/${client_id}/keys`],
      ['DELETE', `/1/tenants/acme/clients/${client_id}/keys/tgkid_aaaaaaaaaaaaaaaa`],
    ];
    for (const [method, path, body] of paths) {
      const res = await call(method, path, bobAcme, body);
      expect([method, path, res.status, res.body.error]).toEqual([method, path, 403, 'forbidden']);
    }
    expect(await store.clients.getClient(client_id)).not.toBeNull();
  });

  it("another tenant's path (403 tenant_mismatch) and another tenant's client (404)", async () => {
    const res = await call('GET', '/1/tenants/globex/clients', aliceAcme);
    expect([res.status, res.body.error]).toEqual([403, 'tenant_mismatch']);
    const created = await call('POST', '/1/tenants/globex/clients', aliceAcme, {
      name: 'x',
      scopes: [],
    });
    expect([created.status, created.body.error]).toEqual([403, 'tenant_mismatch']);

    const globexClient = await newClient(bobGlobex, 'globex');
    for (const [method, suffix] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/secret'],
      ['GET', '/keys'],
      ['POST', '/keys'],
    ] as const) {
      const path = `/1/tenants/acme/clients/${globexClient.client_id}${suffix}`;
      const answer = await call(method, path, aliceAcme);
      expect([method, path, answer.status, answer.body.error]).toEqual([
        method,
        path,
        404,
        'not_found',
      ]);
    }
    expect((await call('GET', '/1/tenants/acme/clients/not-a-client', aliceAcme)).status).toBe(404);
    expect((await store.clients.getClient(globexClient.client_id))?.secretDigest).toBe(
      secretDigest(globexClient.client_secret),
    );
  });

  it('without a valid bearer token (401) or with a personal tenant (403)', async () => {
    expect((await call('GET', '/1/tenants/acme/clients', undefined)).status).toBe(401);
    expect((await call('GET', '/1/tenants/acme/clients', 'x.y.z')).status).toBe(401);
    const dana = { email: 'dana@example.com', password: 'dana-password-1' };
    const signup = await call('POST', '/1/users', undefined, dana);
    const personal = (await tokenFor(fx.gw.url, dana, signup.body.tenant_id)).access_token;
    const res = await call('POST', '/1/tenants/current/clients', personal, {
      name: 'x',
      scopes: [],
    });
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
  });

  // A role change gives the membership a new generation (store `setMemberRole`,
  // as the CLI's `member role`): the token issued before it is refused (401)
  // on every entry way; a token issued since is refused here (403) because
  // the role is read from the store on each request, not from the token.
  it('an admin demoted in the store, at once: the old token (401), a new one (403)', async () => {
    const carl = { email: 'carl@example.com', password: 'carl-password-1' };
    const signup = await call('POST', '/1/users', undefined, carl);
    await store.memberships.addMember('acme', signup.body.user_id, 'admin');
    const token = (await tokenFor(fx.gw.url, carl, 'acme')).access_token;
    expect((await call('GET', '/1/tenants/acme/clients', token)).status).toBe(200);
    expect(await store.memberships.setMemberRole('acme', signup.body.user_id, 'member')).toBe(true);
    const res = await call('POST', '/1/tenants/acme/clients', token, { name: 'x', scopes: [] });
    expect([res.status, res.body.error]).toEqual([401, 'invalid_token']);
    // A new token for the tenant carries the new role: refused too.
    const fresh = (await tokenFor(fx.gw.url, carl, 'acme')).access_token;
    const again = await call('POST', '/1/tenants/acme/clients', fresh, { name: 'x', scopes: [] });
    expect([again.status, again.body.error]).toEqual([403, 'forbidden']);
  });

  it('another method (405, with Allow)', async () => {
    const { client_id } = await newClient();
    const base = `/1/tenants/acme/clients`;
    for (const [method, path, allow] of [
      ['PUT', base, 'HEAD, GET, POST'],
      ['PATCH', `${base}/${client_id}`, 'HEAD, GET, DELETE'],
      ['GET', `${base}/${client_id}/secret`, 'POST'],
      ['DELETE', `${base}/${client_id}/keys`, 'HEAD, GET, POST'],
      ['GET', `${base}/${client_id}/keys/tgkid_aaaaaaaaaaaaaaaa`, 'DELETE'],
    ] as const) {
      const res = await call(method, path, aliceAcme);
      expect([method, path, res.status, res.headers.get('allow')]).toEqual([
        method,
        path,
        405,
        allow,
      ]);
    }
  });

  it('bad bodies (400), an oversized one (413)', async () => {
    const bad: [unknown, RegExp][] = [
      ['{"name": ', /not valid JSON/],
      [{ scopes: [] }, /Invalid name/],
      [{ name: '  ', scopes: [] }, /Invalid name/],
      [{ name: 'x' }, /Invalid scopes/],
      [{ name: 'x', scopes: 'catalog:read' }, /Invalid scopes/],
      [{ name: 'x', scopes: ['has space'] }, /Invalid scopes\.0/],
      [{ name: 'x', scopes: ['admin:all'] }, /admin:all is not a scope a machine client may hold/],
      [{ name: 'x', scopes: [], expires_at: 1 }, /expires_at/],
      [{ name: 'x', scopes: [], expires_at: 'soon' }, /expires_at/],
      [{ name: 'x', scopes: [], extra: 1 }, /unknown field extra/],
    ];
    for (const [body, message] of bad) {
      const res = await call('POST', '/1/tenants/acme/clients', aliceAcme, body);
      expect([res.status, res.body.error], JSON.stringify(body)).toEqual([400, 'invalid_request']);
      expect(res.body.error_description).toMatch(message);
    }
    const { client_id } = await newClient();
    const keys = `/1/tenants/acme/clients/${client_id}/keys`;
    for (const body of [{ expires_at: 10 }, { expires_at: 1.5 }, { other: true }, '[']) {
      const res = await call('POST', keys, aliceAcme, body);
      expect([res.status, res.body.error], JSON.stringify(body)).toEqual([400, 'invalid_request']);
    }
    const big = { name: 'x'.repeat(200_000), scopes: [] };
    const res = await call('POST', '/1/tenants/acme/clients', aliceAcme, big);
    expect([res.status, res.body.error]).toEqual([413, 'payload_too_large']);
    expect(await store.apiKeys.listApiKeys(client_id)).toEqual([]);
  });
});
