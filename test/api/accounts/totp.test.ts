/**
 * TOTP second factor through the identity API (issue 45; docs/accounts.md
 * "Second factor: TOTP and recovery codes"): enrolment pending until a code
 * confirms it, `X-OTP` then required on every Basic endpoint (401
 * `mfa_required`), a code accepted once (replay refused, a step older than
 * one before the clock refused), wrong codes bounded per user (429 past
 * `limits.secondFactor`, however right the code, and audited), recovery
 * codes good once, removal only with a code, and TOTP off: 404 and no code
 * asked. Codes are computed with otplib as an app computes them; the clock
 * is moved through the gateway's seam, never slept.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditRecorder } from '../../../src/audit/recorder.js';
import { resetTotp, totpFactorOf } from '../../../src/identity/totp.js';
import type { UserRecord } from '../../../src/store/types.js';
import { basic, bearer } from '../../support/gateway.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { codeAt, enrolTotp, testClock, totpConfig, userEvents } from '../../support/totp.js';

const clock = testClock();
let fx: IdentityFixture;
let off: IdentityFixture;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture(
    { mfa: totpConfig(), limits: { secondFactor: { perUser: 3, windowSeconds: 600 } } },
    { clock: clock.now },
  );
  off = await startMemoryIdentityFixture();
}, 60_000);
afterAll(async () => {
  await fx?.close();
  await off?.close();
});

let n = 0;
/** A user signed up with their personal tenant: each test its own, so limits and steps never meet. */
interface User {
  email: string;
  password: string;
  tenantId: string;
}

async function newUser(): Promise<User> {
  const who = { email: `totp-${++n}-${Date.now()}@example.com`, password: 'totp-password-1' };
  const res = await fetch(`${fx.gw.url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(who),
  });
  expect(res.status).toBe(201);
  return { ...who, tenantId: ((await res.json()) as { tenant_id: string }).tenant_id };
}

function tokenRequest(who: User, otp?: string, url = fx.gw.url) {
  return fetch(`${url}/1/token?tenant_id=${who.tenantId}`, {
    headers: {
      authorization: basic(who.email, who.password),
      ...(otp === undefined ? {} : { 'x-otp': otp }),
    },
  });
}

/** The current code, after moving the clock one step on (a code is good once). */
async function nextCode(secret: string): Promise<string> {
  clock.move(30);
  return codeAt(secret, clock.now());
}

async function expectMfaRequired(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Basic realm="tenant-gateway"');
  expect(((await res.json()) as { error: string }).error).toBe('mfa_required');
}

describe('enrolment', () => {
  it('answers a secret and an otpauth URI, pending: logins need no code until a code confirms it', async () => {
    const who = await newUser();
    const res = await fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
      method: 'POST',
      headers: { authorization: basic(who.email, who.password) },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { secret, otpauth_uri } = (await res.json()) as { secret: string; otpauth_uri: string };
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(otpauth_uri);
    expect(`${uri.protocol}//${uri.host}${decodeURIComponent(uri.pathname)}`).toBe(
      `otpauth://totp/tenant-gateway:${who.email}`,
    );
    expect([uri.searchParams.get('secret'), uri.searchParams.get('issuer')]).toEqual([
      secret,
      'tenant-gateway',
    ]);
    // Pending: no code asked.
    expect((await tokenRequest(who)).status).toBe(200);
    const confirm = (code: string) =>
      fetch(`${fx.gw.url}/1/users/current/mfa/totp/confirm`, {
        method: 'POST',
        headers: { authorization: basic(who.email, who.password) },
        body: JSON.stringify({ code }),
      });
    const wrong = await confirm('000000');
    expect([wrong.status, ((await wrong.json()) as { error: string }).error]).toEqual([
      400,
      'invalid_request',
    ]);
    expect((await tokenRequest(who)).status).toBe(200);
    const confirmed = await confirm(await codeAt(secret, clock.now()));
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.get('cache-control')).toBe('no-store');
    const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] };
    expect(recovery_codes).toHaveLength(10);
    expect(new Set(recovery_codes).size).toBe(10);
    for (const code of recovery_codes) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    await expectMfaRequired(await tokenRequest(who));
    expect((await userEvents(fx.gw.gateway.store, 'mfa_enrolled')).at(-1)).toMatchObject({
      user_email: who.email,
    });
  });

  it('keeps the secret sealed in the store, never plain, and never in an answer again', async () => {
    const who = await newUser();
    const { secret, recoveryCodes } = await enrolTotp(fx.gw.url, who, clock);
    const user = await fx.gw.gateway.store.users.findUserByEmail(who.email);
    const record = await fx.gw.gateway.store.totp.getTotp(user?.id as string);
    expect(record?.secretSealed).toBeDefined();
    const stored = JSON.stringify(record);
    expect(stored).not.toContain(secret);
    for (const code of recoveryCodes) expect(stored).not.toContain(code);
    expect(record?.recoveryCodesLeft).toBe(10);
  });

  it('an enrolment expires after 10 minutes unconfirmed', async () => {
    const who = await newUser();
    const begun = await fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
      method: 'POST',
      headers: { authorization: basic(who.email, who.password) },
    });
    const { secret } = (await begun.json()) as { secret: string };
    clock.move(601);
    const late = await fetch(`${fx.gw.url}/1/users/current/mfa/totp/confirm`, {
      method: 'POST',
      headers: { authorization: basic(who.email, who.password) },
      body: JSON.stringify({ code: await codeAt(secret, clock.now()) }),
    });
    expect(late.status).toBe(400);
  });
});

describe('X-OTP on every password login', () => {
  it('GET /1/token, /1/oauth/token, /1/users/current/tenants and PUT …/password each need it', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    const auth = { authorization: basic(who.email, who.password) };
    const endpoints: [string, RequestInit][] = [
      [`/1/token?tenant_id=${who.tenantId}`, {}],
      [`/1/oauth/token?tenant_id=${who.tenantId}`, {}],
      ['/1/users/current/tenants', {}],
      [
        '/1/users/current/password',
        { method: 'PUT', body: JSON.stringify({ password: who.password }) },
      ],
    ];
    for (const [path, init] of endpoints) {
      await expectMfaRequired(await fetch(`${fx.gw.url}${path}`, { ...init, headers: auth }));
      const right = await fetch(`${fx.gw.url}${path}`, {
        ...init,
        headers: { ...auth, 'x-otp': await nextCode(secret) },
      });
      expect([path, right.status]).toEqual([path, path.endsWith('password') ? 204 : 200]);
    }
  });

  it("a same-origin script's refusal names no Basic challenge (no browser dialog); anyone else's does", async () => {
    const who = await newUser();
    await enrolTotp(fx.gw.url, who, clock);
    const refused = (fetchMetadata: Record<string, string>) =>
      fetch(`${fx.gw.url}/1/users/current/password`, {
        method: 'PUT',
        headers: { authorization: basic(who.email, who.password), ...fetchMetadata },
        body: JSON.stringify({ password: who.password }),
      });
    const script = await refused({ 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'empty' });
    expect(script.status).toBe(401);
    expect(script.headers.get('www-authenticate')).toBeNull();
    expect(((await script.json()) as { error: string }).error).toBe('mfa_required');
    // Another origin's script, a navigation, and a client that sends no Fetch Metadata: the challenge.
    await expectMfaRequired(
      await refused({ 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'empty' }),
    );
    await expectMfaRequired(
      await refused({ 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'document' }),
    );
    await expectMfaRequired(await refused({}));
  });

  it('a code is good once: replayed, or older than the last one accepted, it is refused', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    const code = await nextCode(secret);
    expect((await tokenRequest(who, code)).status).toBe(200);
    // The same code within its window: refused.
    await expectMfaRequired(await tokenRequest(who, code));
    // Concurrent uses of one fresh code: one wins.
    const fresh = await nextCode(secret);
    const raced = await Promise.all([tokenRequest(who, fresh), tokenRequest(who, fresh)]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 401]);
    // The previous step's code is still within the tolerance, but older than the one accepted.
    const previous = await codeAt(secret, clock.now() - 30_000);
    await expectMfaRequired(await tokenRequest(who, previous));
    const replayed = await userEvents(fx.gw.gateway.store, 'mfa_failed');
    expect(replayed.filter((e) => e.user_email === who.email).map((e) => e.reason)).toContain(
      'replayed',
    );
  });

  it('a code one step ahead (a fast phone) is accepted; one from two steps ago has expired', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    clock.move(90);
    await expectMfaRequired(await tokenRequest(who, await codeAt(secret, clock.now() - 90_000)));
    expect((await tokenRequest(who, await codeAt(secret, clock.now() + 30_000))).status).toBe(200);
  });

  it('wrong codes are bounded per user: past limits.secondFactor 429 however right the code, audited', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    for (let i = 0; i < 3; i++) await expectMfaRequired(await tokenRequest(who, '000000'));
    const locked = await tokenRequest(who, await nextCode(secret));
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await locked.json()) as { error: string }).error).toBe('too_many_requests');
    const failures = (await userEvents(fx.gw.gateway.store, 'mfa_failed')).filter(
      (e) => e.user_email === who.email,
    );
    expect(failures.map((e) => e.reason)).toEqual([
      'wrong_code',
      'wrong_code',
      'wrong_code',
      'throttled',
    ]);
    // Another user's budget is their own.
    const other = await newUser();
    const theirs = await enrolTotp(fx.gw.url, other, clock);
    expect((await tokenRequest(other, await nextCode(theirs.secret))).status).toBe(200);
  });

  it('a recovery code works once, in any case and with or without dashes', async () => {
    const who = await newUser();
    const { recoveryCodes } = await enrolTotp(fx.gw.url, who, clock);
    const [first, second] = recoveryCodes as [string, string];
    expect((await tokenRequest(who, first)).status).toBe(200);
    await expectMfaRequired(await tokenRequest(who, first));
    expect((await tokenRequest(who, second.replace(/-/g, '').toUpperCase())).status).toBe(200);
    const used = (await userEvents(fx.gw.gateway.store, 'recovery_code_used')).filter(
      (e) => e.user_email === who.email,
    );
    expect(used).toHaveLength(2);
    // Another user's recovery code is no code of this one.
    const other = await newUser();
    await enrolTotp(fx.gw.url, other, clock);
    await expectMfaRequired(await tokenRequest(other, recoveryCodes[2]));
  });
});

describe('one code, many requests at once', () => {
  const N = 12;

  /** Exactly one 200; every other answer the documented refusal (401 mfa_required, or 429 past the bound). */
  async function expectOneWinner(answers: Response[]): Promise<void> {
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 200)) {
      expect([401, 429]).toContain(res.status);
      const { error } = (await res.json()) as { error: string };
      expect(error).toBe(res.status === 401 ? 'mfa_required' : 'too_many_requests');
    }
  }

  it('a TOTP code sent by many logins at once signs in one of them', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    const code = await nextCode(secret);
    await expectOneWinner(
      await Promise.all(Array.from({ length: N }, () => tokenRequest(who, code))),
    );
    const user = await fx.gw.gateway.store.users.findUserByEmail(who.email);
    expect(user).not.toBeNull();
  });

  it('a recovery code sent by many logins at once is used once', async () => {
    const who = await newUser();
    const { recoveryCodes } = await enrolTotp(fx.gw.url, who, clock);
    const code = recoveryCodes[0] as string;
    await expectOneWinner(
      await Promise.all(Array.from({ length: N }, () => tokenRequest(who, code))),
    );
    const store = fx.gw.gateway.store;
    const user = await store.users.findUserByEmail(who.email);
    expect((await store.totp.getTotp(user?.id as string))?.recoveryCodesLeft).toBe(9);
    const used = (await userEvents(store, 'recovery_code_used')).filter(
      (e) => e.user_email === who.email,
    );
    expect(used).toHaveLength(1);
  });

  it('a confirming code sent many times at once confirms the enrolment once (one set of recovery codes)', async () => {
    const who = await newUser();
    const authorization = basic(who.email, who.password);
    const begun = await fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
      method: 'POST',
      headers: { authorization },
    });
    expect(begun.status).toBe(201);
    const { secret } = (await begun.json()) as { secret: string };
    const code = await codeAt(secret, clock.now());
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        fetch(`${fx.gw.url}/1/users/current/mfa/totp/confirm`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ code }),
        }),
      ),
    );
    const won = answers.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    // The rest: the enrolment gone (400), or, once confirmed, the Basic login itself needs a code
    // (401, or 429 past the bound).
    for (const res of answers.filter((r) => r.status !== 200)) {
      const { error } = (await res.json()) as { error: string };
      expect(['400 invalid_request', '401 mfa_required', '429 too_many_requests']).toContain(
        `${res.status} ${error}`,
      );
    }
    const { recovery_codes: codes } = (await won[0]?.json()) as { recovery_codes: string[] };
    const enrolled = (await userEvents(fx.gw.gateway.store, 'mfa_enrolled')).filter(
      (e) => e.user_email === who.email,
    );
    expect(enrolled).toHaveLength(1);
    // The winner's codes are the user's; the confirming code is used up.
    expect((await tokenRequest(who, codes[0])).status).toBe(200);
    await expectMfaRequired(await tokenRequest(who, code));
  });
});

describe('changing and removing the factor', () => {
  it('removal needs a code: by bearer without or with a wrong X-OTP 401, with one 204; then no code is asked', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    const login = await tokenRequest(who, await nextCode(secret));
    const { access_token } = (await login.json()) as { access_token: string };
    const remove = (otp?: string) =>
      fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
        method: 'DELETE',
        headers: {
          authorization: bearer(access_token),
          ...(otp === undefined ? {} : { 'x-otp': otp }),
        },
      });
    await expectMfaRequired(await remove());
    await expectMfaRequired(await remove('000000'));
    expect((await remove(await nextCode(secret))).status).toBe(204);
    expect((await tokenRequest(who)).status).toBe(200);
    expect((await remove()).status).toBe(404);
    expect((await userEvents(fx.gw.gateway.store, 'mfa_removed')).at(-1)).toMatchObject({
      user_email: who.email,
      reason: 'removed',
    });
  });

  it('removal by Basic takes the code of the login itself (a recovery code too)', async () => {
    const who = await newUser();
    const { recoveryCodes } = await enrolTotp(fx.gw.url, who, clock);
    const res = await fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
      method: 'DELETE',
      headers: {
        authorization: basic(who.email, who.password),
        'x-otp': recoveryCodes[0] as string,
      },
    });
    expect(res.status).toBe(204);
    expect((await tokenRequest(who)).status).toBe(200);
  });

  it('enrolling again needs the current factor; it stays in force until the new one is confirmed', async () => {
    const who = await newUser();
    const old = await enrolTotp(fx.gw.url, who, clock);
    const { access_token } = (await (
      await tokenRequest(who, await nextCode(old.secret))
    ).json()) as { access_token: string };
    const again = (otp?: string) =>
      fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
        method: 'POST',
        headers: {
          authorization: bearer(access_token),
          ...(otp === undefined ? {} : { 'x-otp': otp }),
        },
      });
    await expectMfaRequired(await again());
    const begun = await again(await nextCode(old.secret));
    expect(begun.status).toBe(201);
    const { secret } = (await begun.json()) as { secret: string };
    // Still the old factor until confirmed.
    expect((await tokenRequest(who, await nextCode(old.secret))).status).toBe(200);
    const confirmed = await fetch(`${fx.gw.url}/1/users/current/mfa/totp/confirm`, {
      method: 'POST',
      headers: { authorization: bearer(access_token) },
      body: JSON.stringify({ code: await nextCode(secret) }),
    });
    expect(confirmed.status).toBe(200);
    await expectMfaRequired(await tokenRequest(who, old.recoveryCodes[0]));
    await expectMfaRequired(await tokenRequest(who, await nextCode(old.secret)));
    expect((await tokenRequest(who, await nextCode(secret))).status).toBe(200);
  });

  it("refuses another user's path and a machine client", async () => {
    const bobId = (await fx.gw.gateway.store.users.findUserByEmail(BOB.email))?.id as string;
    const res = await fetch(`${fx.gw.url}/1/users/${bobId}/mfa/totp`, {
      method: 'POST',
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([
      403,
      'forbidden',
    ]);
  });
});

describe("the operator's reset (user mfa reset)", () => {
  it('removes the factor without a code, audited as reset; user show names the factor, never its secret', async () => {
    const who = await newUser();
    const { secret } = await enrolTotp(fx.gw.url, who, clock);
    const store = fx.gw.gateway.store;
    const user = (await store.users.findUserByEmail(who.email)) as UserRecord;
    const shown = await totpFactorOf(store, user.id);
    expect(shown).toEqual({
      type: 'totp',
      confirmed_at: expect.any(Number),
      recovery_codes_left: 10,
    });
    expect(JSON.stringify(shown)).not.toContain(secret);
    const audit = createAuditRecorder({
      streams: store.auditLog({ maxEventsPerStream: 10_000 }),
      log: pino({ level: 'silent' }),
    });
    const operator = {
      kind: 'operator' as const,
      audit: { source: 'cli' as const, actor: 'cli:test' },
    };
    expect(await resetTotp({ store, audit }, operator, user)).toBe(true);
    expect(await totpFactorOf(store, user.id)).toBeUndefined();
    expect((await tokenRequest(who)).status).toBe(200);
    expect(await resetTotp({ store, audit }, operator, user)).toBe(false);
    expect((await userEvents(store, 'mfa_removed')).at(-1)).toMatchObject({
      user_email: who.email,
      reason: 'reset',
      source: 'cli',
    });
  });
});

describe('TOTP off (mfa.totp.enabled: false)', () => {
  it('the routes are 404 and a login needs no code, even of a user with a factor in the store', async () => {
    for (const [method, path] of [
      ['POST', '/1/users/current/mfa/totp'],
      ['POST', '/1/users/current/mfa/totp/confirm'],
      ['DELETE', '/1/users/current/mfa/totp'],
    ] as const) {
      const res = await fetch(`${off.gw.url}${path}`, {
        method,
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      });
      expect([path, res.status]).toEqual([path, 404]);
    }
    const store = off.gw.gateway.store;
    const alice = (await store.users.findUserByEmail(ALICE.email))?.id as string;
    await store.totp.putPendingTotp(alice, { secretSealed: 'sealed', createdAt: 0 });
    await store.totp.confirmTotp(alice, 'sealed', { step: 1, recoveryDigests: [], at: 0 });
    const res = await tokenRequest({ ...ALICE, tenantId: 'acme' }, undefined, off.gw.url);
    expect(res.status).toBe(200);
  });
});
