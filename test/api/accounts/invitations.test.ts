/**
 * Invitations (issue 45) on a real gateway mailing a real SMTP inbox, its
 * links followed: a new person signs up through the page's form (with
 * `signup.enabled` false: the invitation is the permission), an existing
 * user accepts with Basic, a session user with the cookie; list, revoke,
 * expiry, reuse, and the attacks: another address, an unverified one,
 * another tenant's admin, a member, a machine client, a cross-site post,
 * two concurrent accepts.
 */
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tenantStream } from '../../../src/store/audit-log.js';
import { newOneTimeToken } from '../../../src/auth/one-time-tokens.js';
import { expectError } from '../../support/expect-error.js';
import { basic } from '../../support/gateway.js';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../../support/identity-fixture.js';
import { startMailInbox, type MailInbox } from '../../support/mail-inbox.js';
import { clientToken, makeClient } from '../../support/machine-client.js';
import { cookiePair, postForm, SESSIONS, signIn } from '../../support/sign-in-page.js';
import { adminCall, type Caller } from '../../support/tenant-admin-calls.js';
import { newUser } from '../../store/store-fixtures.js';

const PUBLIC_URL = 'https://gw.example.test';
let inbox: MailInbox;
beforeAll(async () => {
  inbox = await startMailInbox();
});
afterAll(() => inbox?.close());
const s = fixtureSuite(
  {},
  () => ({
    sessions: SESSIONS,
    publicUrl: PUBLIC_URL,
    signup: { enabled: false },
    mail: { smtp: inbox.smtpUrl, from: 'Gateway <no-reply@example.test>' },
  }),
  { logged: true },
);

let alice: Caller;
let bobGlobex: Caller;
beforeAll(async () => {
  alice = { token: (await tokenFor(s.gw.url, ALICE, 'acme')).access_token };
  bobGlobex = { token: (await tokenFor(s.gw.url, BOB, 'globex')).access_token };
});
const call = (caller: Caller, method: string, path: string, body?: unknown) =>
  adminCall(s.gw.url, caller, method, path, body);

/** Invites `email` into `tenant` as `caller`, and reads the token of the link mailed to them. */
async function invite(caller: Caller, tenant: string, email: string, role = 'member') {
  const created = await call(caller, 'POST', `/1/tenants/${tenant}/invitations`, { email, role });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const mail = await inbox.next(email);
  const link = mail.links.find((l) => l.startsWith(`${PUBLIC_URL}/1/invitations/`)) as string;
  return { created: created.body, mail, path: new URL(link).pathname };
}
const accept = (path: string, headers: Record<string, string>) =>
  fetch(`${s.gw.url}${path}/accept`, { method: 'POST', headers });
const asBasic = (user: { email: string; password: string }) => ({
  authorization: basic(user.email, user.password),
});
const verify = async (email: string) => {
  const user = await s.gw.gateway.store.users.findUserByEmail(email);
  await s.gw.gateway.store.users.markEmailVerified(user?.id as string, 1_700_000_000);
};

describe('a new person, through the mailed link', () => {
  it('gets a mail with the link (text and HTML), no secret in the subject; signs up on the page and is a member', async () => {
    const email = 'carol@example.test';
    const before = Math.floor(Date.now() / 1000);
    const { created, mail, path } = await invite(alice, 'acme', email, 'admin');
    expect(created).toEqual({
      invitation_id: expect.stringMatching(/^inv_/),
      email,
      role: 'admin',
      created_at: expect.any(Number),
      expires_at: expect.any(Number),
      invited_by: ALICE.email,
    });
    expect(created.expires_at - created.created_at).toBe(7 * 24 * 3600);
    expect(created.created_at).toBeGreaterThanOrEqual(before);
    const token = path.split('/').pop() as string;
    expect(mail.subject).toBe('You are invited to join Acme');
    expect(mail.subject).not.toContain(token);
    expect(mail.text).toContain(`${PUBLIC_URL}/1/invitations/${token}`);
    expect(mail.html).toContain(`${PUBLIC_URL}/1/invitations/${token}`);
    // The admins' list: the invitation, never its token.
    const listed = await call(alice, 'GET', '/1/tenants/acme/invitations');
    expect(listed.body.invitations).toContainEqual(created);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const page = await fetch(`${s.gw.url}${path}`, { headers: { accept: 'text/html' } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(html).toContain('Acme');
    expect(html).toContain('name="password"');

    const joined = await postForm(s.gw.url, path, {
      action: 'sign-up',
      password: 'carol-password-1',
    });
    expect(joined.status).toBe(200);
    expect(await joined.text()).toContain('You are now a member of');
    const user = await s.gw.gateway.store.users.findUserByEmail(email);
    expect(user?.emailVerifiedAt).toEqual(expect.any(Number));
    const grant = await tokenFor(s.gw.url, { email, password: 'carol-password-1' }, 'acme');
    expect(
      await s.gw.gateway.store.memberships.getMemberRole('acme', grant.user_id as string),
    ).toBe('admin');
    // Used: the link, the form and the API refuse it; the list no longer has it.
    const again = await fetch(`${s.gw.url}${path}`, { headers: { accept: 'text/html' } });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('not valid');
    await expectError(
      await postForm(
        s.gw.url,
        path,
        { action: 'sign-up', password: 'carol-password-2' },
        {
          headers: { accept: 'application/json' },
        },
      ),
      404,
      'not_found',
    );
    expect(
      (await call(alice, 'GET', '/1/tenants/acme/invitations')).body.invitations,
    ).not.toContainEqual(created);
  });

  it('a form posted from another site is refused, and no account is made', async () => {
    const email = 'dan@example.test';
    const { path } = await invite(alice, 'acme', email);
    const res = await postForm(
      s.gw.url,
      path,
      { action: 'sign-up', password: 'dan-password-1' },
      {
        headers: { 'sec-fetch-site': 'cross-site', accept: 'application/json' },
      },
    );
    await expectError(res, 403, 'csrf_refused');
    expect(await s.gw.gateway.store.users.findUserByEmail(email)).toBeNull();
  });
});

describe('the link in the access log', () => {
  it('is written without its token: the page, the form, the accept, in every spelling the router takes', async () => {
    const { path } = await invite(alice, 'acme', 'ida@example.test');
    const token = path.split('/').pop() as string;
    const spellings = [
      path,
      `${path}/`,
      `/1/INVITATIONS/${token}`,
      `/1//invitations/${token}`,
      `//1/invitations/${token}`,
      `/1/%69nvitations/${token}`,
      `/%31/invitations/${token}`,
      `/x/../1/invitations/${token}`,
    ];
    for (const spelling of spellings) {
      const page = await fetch(`${s.gw.url}${spelling}`, { headers: { accept: 'text/html' } });
      expect(page.status, spelling).toBe(200);
    }
    const crossSite = await postForm(
      s.gw.url,
      path,
      { action: 'sign-up', password: 'ida-password-1' },
      { headers: { 'sec-fetch-site': 'cross-site', accept: 'application/json' } },
    );
    await expectError(crossSite, 403, 'csrf_refused');
    await expectError(await accept(`/1/Invitations/${token}`, {}), 401, 'invalid_token');
    await vi.waitFor(() => expect(s.text).toContain('/1/Invitations/…/accept'));
    expect(s.text).toContain('"path":"/1/invitations/…"');
    expect(s.text).not.toContain(token);
  });
});

describe('an existing user', () => {
  it('accepts with Basic, verified: 204, a member with the invited role; the link is used up', async () => {
    await verify(ALICE.email);
    const { path } = await invite(bobGlobex, 'globex', ALICE.email);
    const res = await accept(path, asBasic(ALICE));
    expect(res.status).toBe(204);
    expect((await tokenFor(s.gw.url, ALICE, 'globex')).tenant_id).toBe('globex');
    await expectError(await accept(path, asBasic(ALICE)), 404, 'not_found');
    // A member already is refused a new invitation.
    const again = await call(bobGlobex, 'POST', '/1/tenants/globex/invitations', {
      email: ALICE.email,
    });
    await expectError(again.res, 409, 'user_exists');
    await s.gw.gateway.store.memberships.removeMember(
      'globex',
      (await tokenFor(s.gw.url, ALICE, 'acme')).user_id as string,
    );
  });

  it('another address is refused (forbidden) and the invitation stays usable by its invitee', async () => {
    await verify(BOB.email);
    await verify(ALICE.email);
    const { path } = await invite(bobGlobex, 'globex', ALICE.email);
    const stolen = await accept(path, asBasic(BOB));
    expect((await expectError(stolen, 403, 'forbidden')).error_description).toMatch(
      /another address/,
    );
    expect((await accept(path, asBasic(ALICE))).status).toBe(204);
    await s.gw.gateway.store.memberships.removeMember(
      'globex',
      (await tokenFor(s.gw.url, ALICE, 'acme')).user_id as string,
    );
  });

  it('an unverified address is refused (email_not_verified)', async () => {
    const email = 'erin@example.test';
    const erin = { email, password: 'erin-password-1' };
    await s.gw.gateway.store.users.createUser(
      newUser({ email, passwordHash: bcrypt.hashSync(erin.password, 4) }),
    );
    const { path } = await invite(alice, 'acme', email);
    await expectError(await accept(path, asBasic(erin)), 403, 'email_not_verified');
    await verify(email);
    // Two accepts at once: one wins.
    const both = await Promise.all([accept(path, asBasic(erin)), accept(path, asBasic(erin))]);
    expect(both.map((r) => r.status).sort()).toEqual([204, 404]);
  });

  it('a session user accepts with the cookie; a cross-site post with it is refused', async () => {
    await verify(BOB.email);
    const { res } = await signIn(s.gw.url, { ...BOB, tenant_id: 'globex' });
    const cookie = cookiePair(res, 'tg_session');
    // Bob is invited back into a tenant he left.
    const bobId = (await tokenFor(s.gw.url, BOB, 'globex')).user_id as string;
    await s.gw.gateway.store.memberships.removeMember('acme', bobId);
    const invited = await invite(alice, 'acme', BOB.email);
    const crossSite = await accept(invited.path, { cookie, 'sec-fetch-site': 'cross-site' });
    await expectError(crossSite, 403, 'csrf_refused');
    expect(await s.gw.gateway.store.memberships.isMember('acme', bobId)).toBe(false);
    const page = await fetch(`${s.gw.url}${invited.path}`, {
      headers: { cookie, accept: 'text/html' },
    });
    expect(await page.text()).toContain('Accept the invitation');
    expect((await accept(invited.path, { cookie, 'sec-fetch-site': 'same-origin' })).status).toBe(
      204,
    );
    expect(await s.gw.gateway.store.memberships.getMemberRole('acme', bobId)).toBe('member');
  });
});

describe('one invitation, many uses at once', () => {
  const N = 12;

  /** The invitation's `invitation_accepted` events in the tenant's audit stream. */
  async function acceptedEvents(tenant: string, invitationId: string) {
    const events = await s.gw.gateway.store
      .auditLog({ maxEventsPerStream: 10_000 })
      .read(tenantStream(tenant), 0);
    return events
      .map((e) => JSON.parse(e.event) as Record<string, unknown>)
      .filter((e) => e.event === 'invitation_accepted' && e.invitation_id === invitationId);
  }

  it('accepted by its invitee many times at once: one 204, the rest 404, one membership', async () => {
    const email = 'hank@example.test';
    const hank = { email, password: 'hank-password-1' };
    const created = await s.gw.gateway.store.users.createUser(
      newUser({ email, passwordHash: bcrypt.hashSync(hank.password, 4) }),
    );
    await verify(email);
    const invited = await invite(alice, 'acme', email);
    // By bearer token: N Basic logins at once would meet the login throttle first.
    const { access_token: token } = await tokenFor(s.gw.url, hank, created.personalTenantId);
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        accept(invited.path, { authorization: `Bearer ${token as string}` }),
      ),
    );
    expect(answers.filter((r) => r.status === 204)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 204))
      await expectError(res, 404, 'not_found');
    const members = await s.gw.gateway.store.memberships.listMembers('acme');
    expect(members.filter((m) => m === created.id)).toHaveLength(1);
    expect(await acceptedEvents('acme', invited.created.invitation_id)).toHaveLength(1);
  });

  it('signed up through many times at once: one account, one membership, one password', async () => {
    const email = 'ivy@example.test';
    const invited = await invite(alice, 'acme', email);
    const passwords = Array.from({ length: N }, (_, i) => `ivy-password-${i}-long`);
    const answers = await Promise.all(
      passwords.map((password) =>
        postForm(
          s.gw.url,
          invited.path,
          { action: 'sign-up', password },
          { headers: { accept: 'application/json' } },
        ),
      ),
    );
    const won = answers.findIndex((r) => r.status === 200);
    expect(won).toBeGreaterThanOrEqual(0);
    for (const [i, res] of answers.entries()) {
      if (i === won) continue;
      const { error } = (await res.json()) as { error: string };
      expect(['404 not_found', '409 user_exists']).toContain(`${res.status} ${error}`);
    }
    const users = (await s.gw.gateway.store.users.listUsers()).filter((u) => u.email === email);
    expect(users).toHaveLength(1);
    const members = await s.gw.gateway.store.memberships.listMembers('acme');
    expect(members.filter((m) => m === users[0]?.id)).toHaveLength(1);
    expect(await acceptedEvents('acme', invited.created.invitation_id)).toHaveLength(1);
    const grant = await tokenFor(s.gw.url, { email, password: passwords[won] as string }, 'acme');
    expect(grant.user_id).toBe(users[0]?.id);
  });
});

describe('revoked, expired, and who may not', () => {
  it('a revoked invitation is gone: 204, then 404 everywhere', async () => {
    const { created, path } = await invite(alice, 'acme', 'gina@example.test');
    const other = await call(
      bobGlobex,
      'DELETE',
      `/1/tenants/acme/invitations/${created.invitation_id}`,
    );
    await expectError(other.res, 403, 'tenant_mismatch');
    const globexPath = await call(
      bobGlobex,
      'DELETE',
      `/1/tenants/current/invitations/${created.invitation_id}`,
    );
    await expectError(globexPath.res, 404, 'not_found');
    const revoked = await call(
      alice,
      'DELETE',
      `/1/tenants/acme/invitations/${created.invitation_id}`,
    );
    expect(revoked.status).toBe(204);
    expect((await fetch(`${s.gw.url}${path}`)).status).toBe(404);
    await expectError(
      (await call(alice, 'DELETE', `/1/tenants/acme/invitations/${created.invitation_id}`)).res,
      404,
      'not_found',
    );
  });

  it('an expired invitation is refused', async () => {
    const { token, digest } = newOneTimeToken();
    const now = Math.floor(Date.now() / 1000);
    await s.gw.gateway.store.invitations.addInvitation(
      {
        id: 'inv_expired',
        tenantId: 'acme',
        email: ALICE.email,
        role: 'member',
        createdAt: now - 8 * 24 * 3600,
        expiresAt: now - 1,
        invitedBy: ALICE.email,
        tokenDigest: digest,
      },
      100,
    );
    await expectError(await accept(`/1/invitations/${token}`, asBasic(ALICE)), 404, 'not_found');
    const page = await fetch(`${s.gw.url}/1/invitations/${token}`, {
      headers: { accept: 'text/html' },
    });
    expect(page.status).toBe(404);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it("another tenant's admin, a member, a machine client cannot invite or list", async () => {
    const body = { email: 'x@example.test' };
    await expectError(
      (await call(bobGlobex, 'POST', '/1/tenants/acme/invitations', body)).res,
      403,
      'tenant_mismatch',
    );
    await expectError(
      (await call(bobGlobex, 'GET', '/1/tenants/acme/invitations')).res,
      403,
      'tenant_mismatch',
    );
    // `current` is the token's tenant: globex's invitations, none of acme's.
    const ids = async (caller: Caller, tenant: string) =>
      (await call(caller, 'GET', `/1/tenants/${tenant}/invitations`)).body.invitations.map(
        (i: { invitation_id: string }) => i.invitation_id,
      );
    const acmeIds = await ids(alice, 'acme');
    expect(acmeIds.length).toBeGreaterThan(0);
    for (const id of await ids(bobGlobex, 'current')) expect(acmeIds).not.toContain(id);
    const carol = await tokenFor(
      s.gw.url,
      { email: 'carol@example.test', password: 'carol-password-1' },
      'acme',
    );
    await s.gw.gateway.store.memberships.setMemberRole('acme', carol.user_id as string, 'member');
    const member = {
      token: (
        await tokenFor(
          s.gw.url,
          { email: 'carol@example.test', password: 'carol-password-1' },
          'acme',
        )
      ).access_token,
    };
    await expectError(
      (await call(member, 'POST', '/1/tenants/acme/invitations', body)).res,
      403,
      'forbidden',
    );
    const machine = await makeClient(s.gw.gateway.store, 'acme', []);
    const token = await clientToken(s.gw.url, machine);
    await expectError(
      (await call({ token }, 'POST', '/1/tenants/acme/invitations', body)).res,
      403,
      'forbidden',
    );
    const { path } = await invite(alice, 'acme', 'hal@example.test');
    await expectError(await accept(path, { authorization: `Bearer ${token}` }), 403, 'forbidden');
  });

  it('an admin removed or demoted takes back the invitations they sent; the other admins’ stay', async () => {
    const page = async (path: string) =>
      (await fetch(`${s.gw.url}${path}`, { headers: { accept: 'text/html' } })).status;
    const kept = await invite(alice, 'acme', 'kept@example.test', 'admin');
    for (const [name, end] of [
      ['mallory', 'DELETE'],
      ['dina', 'PUT'],
    ] as const) {
      const who = { email: `${name}@example.test`, password: `${name}-password-1` };
      const user = await s.gw.gateway.store.users.createUser(
        newUser({ email: who.email, passwordHash: bcrypt.hashSync(who.password, 4) }),
      );
      await verify(who.email);
      await s.gw.gateway.store.memberships.addMember('acme', user.id, 'admin');
      const admin = { token: (await tokenFor(s.gw.url, who, 'acme')).access_token };
      // An address of their own, as admin, just before they go.
      const { path } = await invite(admin, 'acme', `${name}-alt@example.test`, 'admin');
      expect(await page(path)).toBe(200);
      const members = `/1/tenants/acme/members/${user.id}`;
      const ended = await call(alice, end, members, end === 'PUT' ? { role: 'member' } : undefined);
      expect(ended.status).toBeLessThan(300);
      expect(await page(path)).toBe(404);
    }
    expect(await page(kept.path)).toBe(200);
    const listed = await call(alice, 'GET', '/1/tenants/acme/invitations');
    const emails = listed.body.invitations.map((i: { email: string }) => i.email);
    expect(emails).toContain('kept@example.test');
    expect(emails).not.toContain('mallory-alt@example.test');
    expect(emails).not.toContain('dina-alt@example.test');
  });

  it('a last admin whose demotion or removal is refused keeps the invitations they sent', async () => {
    const solo = { email: 'solo@example.test', password: 'solo-password-1' };
    const user = await s.gw.gateway.store.users.createUser(
      newUser({ email: solo.email, passwordHash: bcrypt.hashSync(solo.password, 4) }),
    );
    await verify(solo.email);
    await s.gw.gateway.store.tenants.upsertTenant(
      { tenantId: 'solo-co', type: 'orgtenant', name: 'Solo', cloudRegion: 'r', createdBy: 'x' },
      Math.floor(Date.now() / 1000),
    );
    await s.gw.gateway.store.memberships.addMember('solo-co', user.id, 'admin');
    const admin = { token: (await tokenFor(s.gw.url, solo, 'solo-co')).access_token };
    const { path } = await invite(admin, 'solo-co', 'solo-hire@example.test');
    const members = `/1/tenants/solo-co/members/${user.id}`;
    expect((await call(admin, 'PUT', members, { role: 'member' })).status).toBe(403);
    expect((await call(admin, 'DELETE', members)).status).toBe(403);
    const page = await fetch(`${s.gw.url}${path}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
  });

  it('bad input: a malformed address', async () => {
    const bad = await call(alice, 'POST', '/1/tenants/acme/invitations', {
      email: 'not an address',
    });
    await expectError(bad.res, 400, 'invalid_request');
  });
});
