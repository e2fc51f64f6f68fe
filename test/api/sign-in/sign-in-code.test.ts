/**
 * The sign-in page's code step (issue 45; docs/browser-sessions.md): after
 * the password, a user with TOTP gets the code page (no session yet); the
 * pending record waits for the code — the tenant step cannot skip it; a
 * wrong code shows the step again (401) with a sentence, bounded like
 * `X-OTP` (429); a right code (or a recovery code, once) goes on to the
 * session and `return_to`. The outcomes are counted in
 * `tenant_gateway_sign_ins_total`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { ALICE, BOB } from '../../support/identity-fixture.js';
import { adminUrlOf } from '../../support/gateway.js';
import {
  SESSIONS,
  cookiePair,
  hiddenField,
  postForm,
  setCookie,
  signIn,
} from '../../support/sign-in-page.js';
import { codeAt, enrolTotp, totpConfig } from '../../support/totp.js';

const s = fixtureSuite({}, () => ({
  sessions: SESSIONS,
  mfa: totpConfig(),
  limits: { secondFactor: { perUser: 2, windowSeconds: 600 } },
}));
let aliceSecret: string;
let bobCodes: string[];
beforeAll(async () => {
  // The suite's gateway runs on the system clock: codes are computed at it.
  aliceSecret = (await enrolTotp(s.gw.url, ALICE)).secret;
  bobCodes = (await enrolTotp(s.gw.url, BOB)).recoveryCodes;
}, 60_000);

/** Posts the code step with the sign-in's pre-session cookie and the page's form token. */
async function postCode(cookie: string, html: string, code: string): Promise<Response> {
  return postForm(
    s.gw.url,
    '/1/sign-in',
    { csrf_token: hiddenField(html, 'csrf_token') as string, step: 'code', code },
    { cookie },
  );
}

async function passwordThenCodePage(who: { email: string; password: string }) {
  const { page, res } = await signIn(s.gw.url, { ...who, tenant_id: 'acme' });
  expect(res.status).toBe(200);
  expect(setCookie(res, 'tg_session')).toBeUndefined();
  const html = await res.text();
  // The pending sign-in is under the pre-session cookie the code page set, as a browser keeps it.
  const cookie = cookiePair(res, 'tg_signin');
  expect(cookie).not.toBe(page.preSession);
  return { cookie, html };
}

describe('the code step', () => {
  it('asks for the code after the password: one-time-code field, numeric, a recovery-code link', async () => {
    const { html } = await passwordThenCodePage(ALICE);
    expect(html).toContain('autocomplete="one-time-code"');
    expect(html).toContain('inputmode="numeric"');
    expect(html).toContain('<a href="#recovery">Use a recovery code</a>');
    expect(html).toContain('name="step" value="code"');
    expect(html).not.toContain('<script');
  });

  it('a right code goes on to the session and return_to; the same code again is refused', async () => {
    const { cookie, html } = await passwordThenCodePage(ALICE);
    const code = await codeAt(aliceSecret, Date.now() + 30_000);
    const res = await postCode(cookie, html, code);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/app');
    expect(setCookie(res, 'tg_session')).toBeDefined();
    const again = await passwordThenCodePage(ALICE);
    const replayed = await postCode(again.cookie, again.html, code);
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).toContain('That code is wrong, expired or used already');
  });

  it('the tenant step cannot skip the code', async () => {
    const { cookie, html } = await passwordThenCodePage(ALICE);
    const skipped = await postForm(
      s.gw.url,
      '/1/sign-in',
      { csrf_token: hiddenField(html, 'csrf_token') as string, step: 'tenant', tenant_id: 'acme' },
      { cookie },
    );
    expect(skipped.status).toBe(400);
    expect(setCookie(skipped, 'tg_session')).toBeUndefined();
  });

  it('a recovery code works once; wrong codes are bounded (429), the step shown again each time', async () => {
    const { cookie, html } = await passwordThenCodePage(BOB);
    const res = await postCode(cookie, html, bobCodes[0] as string);
    expect(res.status).toBe(303);
    const again = await passwordThenCodePage(BOB);
    const used = await postCode(again.cookie, again.html, bobCodes[0] as string);
    expect(used.status).toBe(401);
    const page = await used.text();
    expect(page).toContain('autocomplete="one-time-code"');
    // perUser 2: the used code was one wrong; one more, then 429 however right.
    const wrong = await postCode(cookiePair(used, 'tg_signin'), page, '000000');
    expect(wrong.status).toBe(401);
    const locked = await postCode(
      cookiePair(wrong, 'tg_signin'),
      await wrong.text(),
      bobCodes[1] as string,
    );
    expect(locked.status).toBe(429);
    expect(await locked.text()).toContain('Too many attempts');
  });

  it('counts the outcomes in tenant_gateway_sign_ins_total', async () => {
    const text = await (await fetch(`${adminUrlOf(s.gw)}/metrics`)).text();
    for (const outcome of ['code_needed', 'wrong_code', 'signed_in', 'throttled'])
      expect(text).toMatch(
        new RegExp(`tenant_gateway_sign_ins_total\\{outcome="${outcome}"\\} [1-9]`),
      );
  });
});

describe('one code, many posts at once', () => {
  const N = 10;
  let n = 0;

  /** A new user with a confirmed factor: their own steps and bound, apart from Alice's and Bob's. */
  async function newEnrolled() {
    const who = { email: `code-race-${++n}@example.com`, password: 'code-race-password-1' };
    const res = await fetch(`${s.gw.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(who),
    });
    expect(res.status).toBe(201);
    const { tenant_id: tenantId, user_id: userId } = (await res.json()) as Record<string, string>;
    const { secret } = await enrolTotp(s.gw.url, who);
    return { who, tenantId: tenantId as string, userId: userId as string, secret };
  }

  async function codePage(who: { email: string; password: string }, tenantId: string) {
    const { res } = await signIn(s.gw.url, { ...who, tenant_id: tenantId });
    expect(res.status).toBe(200);
    return { cookie: cookiePair(res, 'tg_signin'), html: await res.text() };
  }

  const sessionsOf = (userId: string) =>
    s.gw.gateway.store.browserSessions.listBrowserSessions(userId);

  it('one pending sign-in posted with its right code many times at once: one session', async () => {
    const { who, tenantId, userId, secret } = await newEnrolled();
    const { cookie, html } = await codePage(who, tenantId);
    const code = await codeAt(secret, Date.now() + 30_000);
    const answers = await Promise.all(
      Array.from({ length: N }, () => postCode(cookie, html, code)),
    );
    const won = answers.filter((r) => r.status === 303);
    expect(won).toHaveLength(1);
    expect(setCookie(won[0] as Response, 'tg_session')).toBeDefined();
    // The rest find the pending sign-in taken: expired, no session.
    for (const res of answers.filter((r) => r.status !== 303)) {
      expect(res.status).toBe(400);
      expect(setCookie(res, 'tg_session')).toBeUndefined();
    }
    expect(await sessionsOf(userId)).toHaveLength(1);
  });

  it('one code posted at once by many pending sign-ins of the user: one session', async () => {
    const { who, tenantId, userId, secret } = await newEnrolled();
    const pages = [];
    for (let i = 0; i < N; i++) pages.push(await codePage(who, tenantId));
    const code = await codeAt(secret, Date.now() + 30_000);
    const answers = await Promise.all(pages.map((p) => postCode(p.cookie, p.html, code)));
    expect(answers.filter((r) => r.status === 303)).toHaveLength(1);
    // The rest: the code used already (401), or past limits.secondFactor (429); no session.
    for (const res of answers.filter((r) => r.status !== 303)) {
      expect([401, 429]).toContain(res.status);
      expect(setCookie(res, 'tg_session')).toBeUndefined();
    }
    expect(await sessionsOf(userId)).toHaveLength(1);
  });
});
