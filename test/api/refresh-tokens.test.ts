/**
 * Issue 33, refresh tokens on a running gateway (in-memory store): the Basic
 * token endpoint begins a family, `openid-client` refreshes against the
 * discovered metadata, rotation, the grace (the same successor), reuse (the
 * family and its access tokens end, audited by family id only), scope
 * narrowing, every refusal, and what ends a family: logout, RFC 7009
 * revocation, a password change, a membership removed or its role changed,
 * a user disabled or removed, its tenant removed. Issue 42: the chain a past
 * token computes without the store's per-family key is refused, and a
 * well-formed token the family never had (anyone can build one from an access
 * token's `fid`) is refused too, ending nothing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disabledHash } from '../../src/auth/revocation/disabled.js';
import { checksum } from '../../src/auth/clients/secrets.js';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { clientToken, makeClient } from '../support/machine-client.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { changePassword } from '../support/account-requests.js';

let fx: IdentityFixture;
let url: string;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({
    tokens: { refresh: { enabled: true } },
    authorization: { roles: { admin: ['orders:read', 'orders:write'], member: ['orders:read'] } },
  });
  url = fx.gw.url;
});
afterAll(() => fx.close());

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  scope: string;
  [k: string]: unknown;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const refresh = (token: string, extra: Record<string, string> = {}) =>
  fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: FORM,
    body: form({ grant_type: 'refresh_token', refresh_token: token, ...extra }),
  });
const revoke = (token: string, extra: Record<string, string> = {}) =>
  fetch(`${url}/1/oauth/revoke`, {
    method: 'POST',
    headers: FORM,
    body: form({ token, ...extra }),
  });
const tenantWith = (token: string) =>
  fetch(`${url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

async function login(
  user: { email: string; password: string } = ALICE,
  tenantId = 'acme',
): Promise<TokenAnswer> {
  const res = await fetch(`${url}/1/token?tenant_id=${tenantId}`, {
    headers: { authorization: basic(user.email, user.password) },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as TokenAnswer;
}

async function refreshed(token: string, extra: Record<string, string> = {}): Promise<TokenAnswer> {
  const res = await refresh(token, extra);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenAnswer;
}

let signups = 0;
/** A user of its own (signup), a member of acme, for the tests that end its sessions. */
async function newMember(): Promise<{ email: string; password: string; id: string }> {
  const user = { email: `refresh-${++signups}@example.com`, password: 'refresh-password-1' };
  const res = await fetch(`${url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  expect(res.status).toBe(201);
  const { user_id: id } = (await res.json()) as { user_id: string };
  expect(await fx.gw.gateway.store.memberships.addMember('acme', id, 'member')).toBe(true);
  return { ...user, id };
}

describe('the Basic token endpoint', () => {
  it('adds a refresh_token (tgr_…) and gives the access token its family (fid)', async () => {
    const answer = await login();
    expect(answer.refresh_token).toMatch(/^tgr_[a-z2-7]{26}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/);
    const familyId = answer.refresh_token.slice(4, 30);
    expect(decodeJwt(answer.access_token).fid).toBe(familyId);
    const family = await fx.gw.gateway.store.refresh.getRefreshFamily(familyId);
    expect(family).toMatchObject({ tenantId: 'acme', scope: 'orders:read orders:write' });
    expect(JSON.stringify(family)).not.toContain(answer.refresh_token.slice(31, 74));
  });
});

describe('openid-client against a running gateway', () => {
  it('discovers the refresh grant and refreshes twice (rotation)', async () => {
    const config = await oidc.discovery(
      new URL(`${url}/.well-known/oauth-authorization-server`),
      'any-public-client',
      undefined,
      oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );
    const metadata = config.serverMetadata();
    expect(metadata.grant_types_supported).toContain('refresh_token');
    expect(metadata.revocation_endpoint).toBe(`${url}/1/oauth/revoke`);
    const first = await login();
    const second = await oidc.refreshTokenGrant(config, first.refresh_token);
    expect(second.refresh_token).toMatch(/^tgr_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.scope).toBe('orders:read orders:write');
    expect((await tenantWith(second.access_token)).status).toBe(200);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token as string);
    expect(third.refresh_token).not.toBe(second.refresh_token);
    expect((await tenantWith(third.access_token)).status).toBe(200);
  });
});

describe('POST /1/oauth/token grant_type=refresh_token', () => {
  it('answers the OAuth token response with the successor, never cached', async () => {
    const first = await login();
    const res = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as TokenAnswer;
    expect(Object.keys(body).sort()).toEqual(
      ['access_token', 'expires_in', 'refresh_token', 'scope', 'tenant_id', 'token_type'].sort(),
    );
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600, tenant_id: 'acme' });
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({ sub: decodeJwt(first.access_token).sub, tenant_id: 'acme' });
    expect(claims.fid).toBe(decodeJwt(first.access_token).fid);
  });

  it('within the grace, the same token again gets a new access token and the SAME successor', async () => {
    const first = await login();
    const [a, b] = await Promise.all([
      refreshed(first.refresh_token),
      refreshed(first.refresh_token),
    ]);
    expect(a.refresh_token).toBe(b.refresh_token);
    expect(a.access_token).not.toBe(b.access_token);
    const again = await refreshed(first.refresh_token);
    expect(again.refresh_token).toBe(a.refresh_token);
    // The one successor goes on working, and the family was not ended.
    expect((await tenantWith(a.access_token)).status).toBe(200);
    expect((await refresh(a.refresh_token)).status).toBe(200);
  });

  it('a used token after its successor was used: 400 invalid_grant, the family and its access tokens end, audited by family id', async () => {
    const first = await login();
    const honest = await refreshed(first.refresh_token);
    const next = await refreshed(honest.refresh_token);
    // The stolen first token, two rotations back.
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    for (const token of [first.access_token, honest.access_token, next.access_token])
      expect((await tenantWith(token)).status).toBe(401);
    await expectError(await refresh(next.refresh_token), 400, 'invalid_grant');

    const familyId = decodeJwt(first.access_token).fid as string;
    const log = fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
    const events = (await log.read('tenant:acme', 0)).map((e) => e.event);
    const reused = events
      .map((e) => JSON.parse(e) as Record<string, unknown>)
      .filter((e) => e.event === 'refresh_token_reused' && e.family_id === familyId);
    expect(reused).toHaveLength(1);
    expect(reused[0]).toMatchObject({ tenant_id: 'acme', user_email: ALICE.email });
    for (const token of [first, honest, next].map((t) => t.refresh_token))
      expect(events.join('\n')).not.toContain(token.slice(31, 74));
  });

  it('the chain a past token computes without the store’s key is refused and ends nothing (issue 42)', async () => {
    const first = await login();
    const second = await refreshed(first.refresh_token);
    const current = await refreshed(second.refresh_token);
    // Whoever kept `first` (a log, a backup) derives onwards as the successor once was derived.
    const guess = keylessSuccessor(keylessSuccessor(first.refresh_token));
    expect(guess).not.toBe(current.refresh_token);
    await expectError(await refresh(guess), 400, 'invalid_grant');
    expect((await tenantWith(current.access_token)).status).toBe(200);
    expect((await refresh(current.refresh_token)).status).toBe(200);
  });

  it('a well-formed token of a live family that is not one of its own is refused and ends nothing, unaudited (issue 42)', async () => {
    const first = await login();
    const current = await refreshed(first.refresh_token);
    // Built from what an upstream sees: the access token's fid, a random secret, the public checksum.
    const familyId = decodeJwt(first.access_token).fid as string;
    const body = `tgr_${familyId}_${randomBytes(32).toString('base64url')}`;
    await expectError(await refresh(`${body}_${checksum(body)}`), 400, 'invalid_grant');
    expect((await tenantWith(current.access_token)).status).toBe(200);
    expect((await refresh(current.refresh_token)).status).toBe(200);
    const log = fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
    const reused = (await log.read('tenant:acme', 0))
      .map((e) => JSON.parse(e.event) as Record<string, unknown>)
      .filter((e) => e.event === 'refresh_token_reused' && e.family_id === familyId);
    expect(reused).toHaveLength(0);
  });

  it('a scope parameter narrows, never widens (RFC 6749 §6)', async () => {
    const first = await login();
    const narrow = await refreshed(first.refresh_token, { scope: 'orders:read' });
    expect(narrow.scope).toBe('orders:read');
    expect(decodeJwt(narrow.access_token).scope).toBe('orders:read');
    await expectError(
      await refresh(narrow.refresh_token, { scope: 'orders:read clients:manage' }),
      400,
      'invalid_scope',
    );
    // The family keeps what was granted at login.
    const full = await refreshed(narrow.refresh_token);
    expect(full.scope).toBe('orders:read orders:write');
  });

  it('refuses what is not a live refresh token: 400 invalid_grant; none at all: invalid_request', async () => {
    const { refresh_token: token } = await login();
    const flipped = `${token.slice(0, 40)}${token[40] === 'A' ? 'B' : 'A'}${token.slice(41)}`;
    for (const bad of ['nonsense', flipped, `tgr_${'a'.repeat(26)}_${'b'.repeat(43)}_000000`])
      await expectError(await refresh(bad), 400, 'invalid_grant');
    await expectError(
      await fetch(`${url}/1/oauth/token`, {
        method: 'POST',
        headers: FORM,
        body: form({ grant_type: 'refresh_token' }),
      }),
      400,
      'invalid_request',
    );
    // The real token was never touched by those.
    expect((await refresh(token)).status).toBe(200);
  });
});

/** A token's successor as it was derived before issue 42: HMAC keyed by the token's own secret. */
function keylessSuccessor(token: string): string {
  const [, familyId, secret] = /^tgr_([a-z2-7]{26})_([A-Za-z0-9_-]{43})_/.exec(token)!;
  const next = createHmac('sha256', secret!)
    .update(`tgr successor ${familyId}`)
    .digest('base64url');
  const body = `tgr_${familyId}_${next}`;
  return `${body}_${checksum(body)}`;
}

describe('what ends a family', () => {
  it('logout (DELETE /1/token) with a token of the family', async () => {
    const first = await login();
    const res = await fetch(`${url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(first.access_token) },
    });
    expect(res.status).toBe(204);
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });

  it('RFC 7009 revocation of the refresh token: the family and its access tokens', async () => {
    const first = await login();
    const second = await refreshed(first.refresh_token);
    const res = await revoke(second.refresh_token, { token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe('');
    expect((await tenantWith(second.access_token)).status).toBe(401);
    await expectError(await refresh(second.refresh_token), 400, 'invalid_grant');
    const familyId = decodeJwt(first.access_token).fid as string;
    const log = fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
    const events = (await log.read('tenant:acme', 0)).map((e) => e.event);
    expect(
      events.filter((e) => e.includes('"token_revoked"') && e.includes(familyId)),
    ).toHaveLength(1);
    expect(events.join('\n')).not.toContain(second.refresh_token.slice(31, 74));
  });

  it('RFC 7009 revocation of an access token: the token and its family', async () => {
    const first = await login();
    expect((await revoke(first.access_token)).status).toBe(200);
    expect((await tenantWith(first.access_token)).status).toBe(401);
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });

  it("RFC 7009 of a machine client's token: revoked, audited by client id", async () => {
    const client = await makeClient(fx.gw.gateway.store, 'acme', []);
    const token = await clientToken(url, client);
    expect((await revoke(token, { token_type_hint: 'access_token' })).status).toBe(200);
    expect((await tenantWith(token)).status).toBe(401);
    const log = fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
    const revoked = (await log.read('tenant:acme', 0))
      .map((e) => JSON.parse(e.event) as Record<string, unknown>)
      .filter((e) => e.event === 'token_revoked' && e.jti === decodeJwt(token).jti);
    expect(revoked).toEqual([
      expect.objectContaining({ actor: client.clientId, client_id: client.clientId }),
    ]);
    expect(revoked[0]).not.toHaveProperty('user_id');
  });

  it('RFC 7009: an unknown or made-up token is 200 and ends nothing; no token is 400', async () => {
    const first = await login();
    const familyId = first.refresh_token.slice(4, 30);
    // A stranger who learnt the family id (an access token's fid) cannot end it.
    const forged = `tgr_${familyId}_${'x'.repeat(43)}`;
    for (const token of ['nonsense', forged, 'eyJhbGciOiJub25lIn0.e30.'])
      expect((await revoke(token)).status).toBe(200);
    expect((await refresh(first.refresh_token)).status).toBe(200);
    await expectError(
      await fetch(`${url}/1/oauth/revoke`, { method: 'POST', headers: FORM, body: '' }),
      400,
      'invalid_request',
    );
  });

  it('more logins at one tenant than a user may keep families: the oldest there ends, never one at another tenant (issue 42)', async () => {
    const atAcme = await login(BOB, 'acme');
    const atGlobex = [];
    for (let i = 0; i < 51; i++) atGlobex.push(await login(BOB, 'globex'));
    // One of globex's ended (logins in one second end in one second: any of them is oldest).
    const statuses = [];
    for (const { refresh_token: token } of atGlobex) statuses.push((await refresh(token)).status);
    expect(statuses.filter((status) => status === 400)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect((await tenantWith(atAcme.access_token)).status).toBe(200);
    expect((await refresh(atAcme.refresh_token)).status).toBe(200);
  });

  it('a password change', async () => {
    const user = await newMember();
    const first = await login(user);
    const res = await changePassword(url, user, 'another-password-2');
    expect(res.status).toBe(204);
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    // Ended, not only refused: logging in again begins a new family that works.
    const again = await login({ ...user, password: 'another-password-2' });
    expect((await refresh(again.refresh_token)).status).toBe(200);
  });

  it('a membership removed (and added back: the old family stays ended)', async () => {
    const user = await newMember();
    const first = await login(user);
    expect(await fx.gw.gateway.store.memberships.removeMember('acme', user.id)).toBe(true);
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    expect(await fx.gw.gateway.store.memberships.addMember('acme', user.id, 'member')).toBe(true);
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });

  it('a user disabled, and a user removed', async () => {
    const store = fx.gw.gateway.store;
    const disabled = await newMember();
    const first = await login(disabled);
    const user = await store.users.getUser(disabled.id);
    expect(
      await store.users.setPasswordHash(disabled.id, disabledHash(user!.passwordHash)),
    ).not.toBeNull();
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    const removed = await newMember();
    const second = await login(removed);
    expect(await store.users.removeUser(removed.id)).not.toBeNull();
    await expectError(await refresh(second.refresh_token), 400, 'invalid_grant');
  });

  it('its tenant removed', async () => {
    const store = fx.gw.gateway.store;
    const user = await newMember();
    await store.tenants.upsertTenant(
      { tenantId: 'refresh-org', type: 'orgtenant', name: 'R', cloudRegion: 'x', createdBy: 'x' },
      Math.floor(Date.now() / 1000),
    );
    expect(await store.memberships.addMember('refresh-org', user.id, 'member')).toBe(true);
    const first = await login(user, 'refresh-org');
    expect(await store.tenants.removeOrgTenant('refresh-org')).not.toBeNull();
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });

  it('a role change', async () => {
    const user = await newMember();
    const first = await login(user);
    expect(await fx.gw.gateway.store.memberships.setMemberRole('acme', user.id, 'admin')).toBe(
      true,
    );
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });
});

describe('what the gateway tells', () => {
  it('RFC 8414 metadata lists the refresh grant, no client authentication for it, and the revocation endpoint', async () => {
    const res = await fetch(`${url}/.well-known/oauth-authorization-server`);
    expect(await res.json()).toMatchObject({
      grant_types_supported: ['client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint: `${url}/1/oauth/revoke`,
    });
  });

  it('counts refreshes by outcome', async () => {
    const first = await login();
    const second = await refreshed(first.refresh_token);
    await refreshed(first.refresh_token); // grace
    await refreshed(second.refresh_token);
    await refresh(first.refresh_token); // reused
    await refresh('nonsense'); // invalid
    const metrics = await (await fetch(`${fx.gw.adminUrl}/metrics`)).text();
    for (const outcome of ['rotated', 'grace', 'reused', 'invalid'])
      expect(metrics).toMatch(
        new RegExp(`^tenant_gateway_refreshes_total\\{outcome="${outcome}"\\} [1-9]`, 'm'),
      );
  });
});
