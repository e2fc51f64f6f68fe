/**
 * Issue 21: `user disable`, `user remove` and `tenant remove` as an operator
 * runs them (the CLI as the harness runs it) against two running gateways
 * (`serve` processes) on one Redis. A token issued before the command is
 * refused (401) by both the moment the command has returned; logins are
 * refused; nothing else changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import { expectBearerChallenge, expectError } from '../support/expect-error.js';
import {
  type Case,
  type CliHarness,
  type Served,
  releaseCliHarness,
  sharedCliHarness,
} from './harness.js';

const TIMEOUT = 30_000;

const ALICE = { email: 'alice@example.com', password: 'alice-password-1' };
const BOB = { email: 'bob@example.com', password: 'bob-password-1' };
const CAROL = { email: 'carol@example.com', password: 'carol-password-1' };
const SEED = [
  'users:',
  `  - { email: ${ALICE.email}, password: "${ALICE.password}" }`,
  `  - { email: ${BOB.email}, password: "${BOB.password}" }`,
  `  - { email: ${CAROL.email}, password: "${CAROL.password}" }`,
  'tenants:',
  '  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: alice@example.com,',
  '      members: [alice@example.com, bob@example.com, carol@example.com] }',
  '  - { tenant_id: globex, name: Globex, cloud_region: eu-west-1, created_by: bob@example.com,',
  '      members: [alice@example.com, bob@example.com] }',
].join('\n');

interface Who {
  email: string;
  password: string;
}

let h: CliHarness;
let kase: Case;
/** Two instances sharing the store. */
let gateways: Served[] = [];

beforeAll(async () => {
  h = await sharedCliHarness();
  kase = h.newCase();
  await h.ok(['keys', 'add', ...kase.c]);
  await h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]);
  // Started together; one that started is stopped by afterAll even if the other did not.
  const started = await Promise.allSettled([h.serve(kase), h.serve(kase)]);
  for (const s of started) if (s.status === 'fulfilled') gateways.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
}, TIMEOUT);

afterAll(async () => {
  for (const gw of gateways) expect(await gw.stop()).toBe(0);
  gateways = [];
  if (h !== undefined) await releaseCliHarness();
});

const login = (gw: Served, who: Who, tenantId: string) =>
  fetch(`${gw.base}/1/token?tenant_id=${tenantId}`, {
    headers: { authorization: basic(who.email, who.password) },
  });

/** A token from `gw` (200 asserted). */
async function tokenFor(gw: Served, who: Who, tenantId: string) {
  const granted = await login(gw, who, tenantId);
  expect(granted.status).toBe(200);
  return (await granted.json()) as { access_token: string; user_id: string; tenant_id: string };
}

/** A Bearer endpoint of the gateway itself: the token's own tenant record. */
const tenantRecord = (gw: Served, token: string, tenantId: string) =>
  fetch(`${gw.base}/1/tenants/${tenantId}`, { headers: { authorization: bearer(token) } });

async function expectRefused(res: Response): Promise<void> {
  await expectError(res, 401, 'invalid_token');
  expectBearerChallenge(res);
}

describe('user disable and enable', () => {
  it(
    'disable ends every token of the user on every instance before it returns; enable lets them log in, old tokens still refused',
    async () => {
      const [a, b] = gateways as [Served, Served];
      const before = [await tokenFor(a, CAROL, 'acme'), await tokenFor(b, CAROL, 'acme')];
      for (const gw of gateways)
        for (const t of before)
          expect((await tenantRecord(gw, t.access_token, 'acme')).status).toBe(200);

      expect(await h.ok(['user', 'disable', CAROL.email, ...kase.c])).toMatchObject({
        disabled: true,
        sessions: 'ended',
      });
      for (const gw of gateways) {
        for (const t of before) await expectRefused(await tenantRecord(gw, t.access_token, 'acme'));
        const right = await expectError(await login(gw, CAROL, 'acme'), 401, 'invalid_credentials');
        const wrong = await expectError(
          await login(gw, { email: CAROL.email, password: 'not-her-password' }, 'acme'),
          401,
          'invalid_credentials',
        );
        expect(right).toEqual(wrong);
      }

      expect(await h.ok(['user', 'enable', CAROL.email, ...kase.c])).toMatchObject({
        disabled: false,
      });
      for (const gw of gateways) {
        const fresh = await tokenFor(gw, CAROL, 'acme');
        expect((await tenantRecord(gw, fresh.access_token, 'acme')).status).toBe(200);
        for (const t of before) await expectRefused(await tenantRecord(gw, t.access_token, 'acme'));
      }
    },
    TIMEOUT,
  );
});

describe('user remove', () => {
  it(
    'ends every token of the user on every instance before it returns; logins then fail as a wrong password',
    async () => {
      const [a, b] = gateways as [Served, Served];
      const acme = await tokenFor(a, ALICE, 'acme');
      const personalTenant = (
        await h.ok<{ user_email: string; tenant_id: string }[]>(['user', 'list', ...kase.c])
      ).find((u) => u.user_email === ALICE.email)?.tenant_id as string;
      const personal = await tokenFor(b, ALICE, personalTenant);
      const bobs = await tokenFor(b, BOB, 'acme');
      const held = [
        { token: acme.access_token, tenant: 'acme' },
        { token: personal.access_token, tenant: personalTenant },
      ];
      // Every instance has judged (and cached) the tokens alive.
      for (const gw of gateways)
        for (const t of held) expect((await tenantRecord(gw, t.token, t.tenant)).status).toBe(200);

      expect(await h.ok(['user', 'remove', 'Alice@Example.com', ...kase.c])).toEqual({
        user_id: acme.user_id,
        user_email: ALICE.email,
        tenant_id: personalTenant,
        removed: true,
        memberships_ended: ['acme', 'globex', personalTenant].sort(),
        sessions: 'ended',
      });

      for (const gw of gateways) {
        for (const t of held) await expectRefused(await tenantRecord(gw, t.token, t.tenant));
        const right = await expectError(await login(gw, ALICE, 'acme'), 401, 'invalid_credentials');
        const wrong = await expectError(
          await login(gw, { email: ALICE.email, password: 'not-her-password' }, 'acme'),
          401,
          'invalid_credentials',
        );
        expect(right).toEqual(wrong);
        // Bob, a member of the same tenant, is untouched.
        expect((await tenantRecord(gw, bobs.access_token, 'acme')).status).toBe(200);
      }

      // What the store holds now, read by runs started together (none of them writes).
      const [users, tenants, members, again] = await Promise.all([
        h.ok<{ user_email: string }[]>(['user', 'list', ...kase.c]),
        h.ok<{ tenant_id: string }[]>(['tenant', 'list', ...kase.c]),
        h.ok<{ members: { user_email: string }[] }>(['member', 'list', 'acme', ...kase.c]),
        h.fails(['user', 'remove', ALICE.email, ...kase.c]),
      ]);
      expect(users.map((u) => u.user_email).sort()).toEqual([BOB.email, CAROL.email]);
      expect(tenants.map((t) => t.tenant_id)).not.toContain(personalTenant);
      expect(members.members.map((m) => m.user_email).sort()).toEqual([BOB.email, CAROL.email]);
      // Not there (any more): exit 1, naming the user.
      expect(again).toBe(`error: no user ${ALICE.email}\n`);
    },
    TIMEOUT,
  );
});

describe('tenant remove', () => {
  it(
    "ends every member's tokens for the tenant on every instance before it returns, and only those",
    async () => {
      const [a, b] = gateways as [Served, Served];
      const acme = [await tokenFor(a, BOB, 'acme'), await tokenFor(b, BOB, 'acme')];
      const globex = await tokenFor(a, BOB, 'globex');
      for (const gw of gateways) {
        for (const t of acme)
          expect((await tenantRecord(gw, t.access_token, 'acme')).status).toBe(200);
        expect((await tenantRecord(gw, globex.access_token, 'globex')).status).toBe(200);
      }

      const carol = await tokenFor(b, CAROL, 'acme');
      const removed = await h.ok<{ members_removed: { user_email: string }[] }>([
        'tenant',
        'remove',
        'acme',
        ...kase.c,
      ]);
      expect(removed).toMatchObject({ tenant_id: 'acme', removed: true });
      expect(removed.members_removed.map((m) => m.user_email).sort()).toEqual([
        BOB.email,
        CAROL.email,
      ]);
      expect(removed.members_removed).toContainEqual({
        user_id: globex.user_id,
        user_email: BOB.email,
      });

      for (const gw of gateways) {
        for (const t of [...acme, carol])
          await expectRefused(await tenantRecord(gw, t.access_token, 'acme'));
        // Bob's token for another tenant keeps working; he may still log in, not for acme.
        expect((await tenantRecord(gw, globex.access_token, 'globex')).status).toBe(200);
        await expectError(await login(gw, BOB, 'acme'), 403, 'tenant_access_denied');
        expect((await login(gw, BOB, 'globex')).status).toBe(200);
      }
      // Runs started together: none of them writes.
      const [tenants, again, users] = await Promise.all([
        h.ok<{ tenant_id: string }[]>(['tenant', 'list', ...kase.c]),
        h.fails(['tenant', 'remove', 'acme', ...kase.c]),
        h.ok<{ user_email: string; tenant_id: string }[]>(['user', 'list', ...kase.c]),
      ]);
      expect(tenants.map((t) => t.tenant_id)).not.toContain('acme');
      expect(again).toBe('error: no tenant acme\n');
      const bobsOwn = users.find((u) => u.user_email === BOB.email)?.tenant_id as string;
      expect(await h.fails(['tenant', 'remove', bobsOwn, ...kase.c])).toBe(
        `error: ${bobsOwn} is a personal tenant: it goes only with its user (user remove)\n`,
      );
      // Bob's personal tenant is intact.
      expect((await login(a, BOB, bobsOwn)).status).toBe(200);
    },
    TIMEOUT,
  );
});
