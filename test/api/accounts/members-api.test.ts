/**
 * The members API for a tenant's admins (issue 45): list with roles, change a
 * role, remove — each ending the member's tokens for the tenant at once —
 * by bearer token or by the browser session (the same-origin rule for an
 * unsafe method), and the attacks: another tenant's admin (path, `current`,
 * a token of A with B's path), a member, a machine client, a personal
 * tenant, a user id of another tenant's member, the last admin.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../support/expect-error.js';
import { bearer } from '../../support/gateway.js';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../../support/identity-fixture.js';
import { makeClient } from '../../support/machine-client.js';
import { cookiePair, SESSIONS, signIn } from '../../support/sign-in-page.js';
import { adminCall, type Caller } from '../../support/tenant-admin-calls.js';
import { newUser } from '../../store/store-fixtures.js';

const s = fixtureSuite({}, () => ({ sessions: SESSIONS }));
const MEMBERS = '/1/tenants/acme/members';

let alice: Caller;
let aliceId: string;
let bobId: string;
beforeAll(async () => {
  const grant = await tokenFor(s.gw.url, ALICE, 'acme');
  alice = { token: grant.access_token };
  aliceId = grant.user_id as string;
  bobId = (await tokenFor(s.gw.url, BOB, 'acme')).user_id as string;
});

const call = (caller: Caller, method: string, path: string, body?: unknown) =>
  adminCall(s.gw.url, caller, method, path, body);
/** Whether a bearer token is still good, asked of the tenant record. */
const tokenWorks = async (token: string) =>
  (await fetch(`${s.gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } }))
    .status === 200;

describe('an admin of the tenant', () => {
  it('lists the members with role, joined_at and federated', async () => {
    const { status, body, res } = await call(alice, 'GET', MEMBERS);
    expect(status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const byEmail = Object.fromEntries(
      (body.members as { email: string }[]).map((m) => [m.email, m]),
    );
    expect(byEmail[ALICE.email]).toEqual({
      user_id: aliceId,
      email: ALICE.email,
      role: 'admin',
      joined_at: expect.any(Number),
      federated: false,
    });
    expect(byEmail[BOB.email]).toMatchObject({ user_id: bobId, role: 'member' });
    expect(Object.keys(byEmail).sort()).toEqual([ALICE.email, BOB.email]);
    expect((await call(alice, 'GET', '/1/tenants/current/members')).body).toEqual(body);
  });

  it("changes a role: 200 with the member; the member's token for the tenant ends at once", async () => {
    const bobToken = (await tokenFor(s.gw.url, BOB, 'acme')).access_token;
    const promoted = await call(alice, 'PUT', `${MEMBERS}/${bobId}`, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ user_id: bobId, email: BOB.email, role: 'admin' });
    expect(await tokenWorks(bobToken)).toBe(false);
    const demoted = await call(alice, 'PUT', `${MEMBERS}/${bobId}`, { role: 'member' });
    expect(demoted.body.role).toBe('member');
    await expectError(
      (await call(alice, 'PUT', `${MEMBERS}/${bobId}`, { role: 'owner' })).res,
      400,
      'invalid_request',
    );
  });

  it('keeps a last admin: neither demoted nor removed', async () => {
    for (const [method, body] of [
      ['PUT', { role: 'member' }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await call(alice, method, `${MEMBERS}/${aliceId}`, body);
      const error = await expectError(refused.res, 403, 'forbidden');
      expect(error.error_description).toMatch(/last admin/);
    }
    expect((await call(alice, 'GET', MEMBERS)).body.members).toContainEqual(
      expect.objectContaining({ user_id: aliceId, role: 'admin' }),
    );
  });

  it("a user id that is no member here is 404, another tenant's member alike", async () => {
    const carol = await s.gw.gateway.store.users.createUser(
      newUser({ email: 'carol-members@example.com' }),
    );
    await s.gw.gateway.store.memberships.addMember('globex', carol.id, 'member');
    for (const id of [carol.id, 'no-such-user']) {
      const a = await call(alice, 'DELETE', `${MEMBERS}/${id}`);
      const b = await call(alice, 'PUT', `${MEMBERS}/${id}`, { role: 'admin' });
      expect((await expectError(a.res, 404, 'not_found')).error_description).toBe(
        'The user is not a member of the tenant.',
      );
      await expectError(b.res, 404, 'not_found');
    }
    expect(await s.gw.gateway.store.memberships.isMember('globex', carol.id)).toBe(true);
  });
});

describe('by the browser session', () => {
  let cookie: string;
  beforeAll(async () => {
    const { res } = await signIn(s.gw.url, { ...ALICE, tenant_id: 'acme' });
    expect(res.status).toBe(303);
    cookie = cookiePair(res, 'tg_session');
  });

  it('a session admin lists members and machine clients (every tenant-admin endpoint)', async () => {
    const members = await call({ cookie }, 'GET', MEMBERS);
    expect(members.status).toBe(200);
    expect(members.body.members).toHaveLength(2);
    expect((await call({ cookie }, 'GET', '/1/tenants/current/clients')).status).toBe(200);
    expect((await call({ cookie }, 'GET', '/1/tenants/acme/domains')).status).toBe(200);
  });

  it('a cross-site unsafe request with the cookie is refused and changes nothing', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const refused = await call({ cookie, site }, 'DELETE', `${MEMBERS}/${bobId}`);
      await expectError(refused.res, 403, 'csrf_refused');
      const client = await call({ cookie, site }, 'POST', '/1/tenants/acme/clients', {
        name: 'x',
        scopes: [],
      });
      await expectError(client.res, 403, 'csrf_refused');
    }
    expect(await s.gw.gateway.store.memberships.isMember('acme', bobId)).toBe(true);
  });

  it('a same-origin one with the cookie goes through', async () => {
    const changed = await call({ cookie }, 'PUT', `${MEMBERS}/${bobId}`, { role: 'member' });
    expect(changed.status).toBe(200);
  });
});

describe('who may not', () => {
  it('an admin of globex, by path, by `current`, and with a token of acme on globex’s path', async () => {
    const bobGlobex = { token: (await tokenFor(s.gw.url, BOB, 'globex')).access_token };
    await expectError((await call(bobGlobex, 'GET', MEMBERS)).res, 403, 'tenant_mismatch');
    await expectError(
      (await call(bobGlobex, 'DELETE', `${MEMBERS}/${aliceId}`)).res,
      403,
      'tenant_mismatch',
    );
    // `current` is the token's own tenant: globex's members, never acme's.
    const own = await call(bobGlobex, 'GET', '/1/tenants/current/members');
    expect(own.body.members.map((m: { email: string }) => m.email)).not.toContain(ALICE.email);
    await expectError(
      (await call(alice, 'GET', '/1/tenants/globex/members')).res,
      403,
      'tenant_mismatch',
    );
  });

  it('a member who is no admin', async () => {
    const bob = { token: (await tokenFor(s.gw.url, BOB, 'acme')).access_token };
    await expectError((await call(bob, 'GET', MEMBERS)).res, 403, 'forbidden');
    await expectError(
      (await call(bob, 'PUT', `${MEMBERS}/${bobId}`, { role: 'admin' })).res,
      403,
      'forbidden',
    );
  });

  it("a machine client's token, whatever its scopes", async () => {
    const machine = await makeClient(s.gw.gateway.store, 'acme', []);
    const grant = await fetch(`${s.gw.url}/1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: machine.clientId,
        client_secret: machine.clientSecret,
      }).toString(),
    });
    const token = ((await grant.json()) as { access_token: string }).access_token;
    await expectError((await call({ token }, 'GET', MEMBERS)).res, 403, 'forbidden');
  });

  it('on a personal tenant: no members API', async () => {
    const tenants = await s.gw.gateway.store.memberships.listUserTenants(aliceId);
    const own = tenants.find((t) => t.type === 'usertenant')?.tenantId as string;
    const personal = (await tokenFor(s.gw.url, ALICE, own)).access_token;
    const refused = await call({ token: personal }, 'GET', '/1/tenants/current/members');
    expect((await expectError(refused.res, 403, 'forbidden')).error_description).toMatch(
      /personal tenant/,
    );
  });

  it('nobody', async () => {
    await expectError(await fetch(`${s.gw.url}${MEMBERS}`), 401, 'invalid_token');
  });
});

describe('removal', () => {
  it("ends the member's token at once; they are gone from the list", async () => {
    const bobToken = (await tokenFor(s.gw.url, BOB, 'acme')).access_token;
    const removed = await call(alice, 'DELETE', `${MEMBERS}/${bobId}`);
    expect(removed.status).toBe(204);
    expect(await tokenWorks(bobToken)).toBe(false);
    const listed = await call(alice, 'GET', MEMBERS);
    expect(listed.body.members.map((m: { user_id: string }) => m.user_id)).toEqual([aliceId]);
    await expectError((await call(alice, 'DELETE', `${MEMBERS}/${bobId}`)).res, 404, 'not_found');
  });
});
