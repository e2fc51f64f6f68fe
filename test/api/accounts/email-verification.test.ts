/**
 * Issue 45, verified e-mail: a real gateway mailing a real SMTP inbox, the
 * mailed link followed. Signup creates the user unverified and mails a
 * one-time link on `publicUrl`; its GET is a page with a button and uses
 * nothing (a mail scanner's visit); its POST verifies, once. A password
 * login before that is refused 403 `email_not_verified` only once the
 * password is proven right (a wrong one stays `invalid_credentials`), on
 * the Basic endpoints and the sign-in page alike, and mails a new link, at
 * most `limits.passwordReset.perEmail` per address. Then the attacks:
 * reuse, expiry, malformed and unknown tokens, host poisoning.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signUp } from '../../support/account-requests.js';
import {
  expectLinkPage,
  followLink,
  mailedConfig,
  postJson,
  PUBLIC_URL,
  tokenOf,
  userEvents,
} from '../../support/account-mail.js';
import { expectError } from '../../support/expect-error.js';
import { basic } from '../../support/gateway.js';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { startMailInbox, type MailInbox } from '../../support/mail-inbox.js';
import { openSignIn, postForm, SESSIONS } from '../../support/sign-in-page.js';

const VERIFY = '/1/email-verifications';
const PER_EMAIL = 3;
let inbox: MailInbox;
let n = 0;

beforeAll(async () => {
  inbox = await startMailInbox();
});
afterAll(async () => {
  await inbox?.close();
});
afterEach(() => {
  vi.useRealTimers();
});
const s = fixtureSuite({}, () => ({
  ...mailedConfig(inbox),
  sessions: SESSIONS,
  limits: { passwordReset: { perEmail: PER_EMAIL, perIp: 1000, windowSeconds: 3600 } },
}));

/** A new person, signed up (201); their first mail not yet read. */
async function newPerson(headers: Record<string, string> = {}) {
  const who = { email: `person${++n}@example.net`, password: `password-of-${n}-long` };
  const res = await fetch(`${s.gw.url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(who),
  });
  expect(res.status).toBe(201);
  return who;
}

/** A Basic login (the tenants list: every Basic endpoint proves the password through one function). */
const logIn = (who: { email: string; password: string }) =>
  fetch(`${s.gw.url}/1/users/current/tenants`, {
    headers: { authorization: basic(who.email, who.password) },
  });

describe('signup with verification on (mail set, signup.verifyEmail omitted)', () => {
  it('mails a one-time link on publicUrl, text and HTML, no secret in the subject; the user is unverified', async () => {
    const who = await newPerson();
    const mail = await inbox.next(who.email);
    const link = followLink(mail, VERIFY, s.gw.url);
    const token = tokenOf(link);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(mail.subject).toBe('Confirm your e-mail address');
    expect(mail.subject).not.toContain(token);
    expect(mail.text).toContain(`${PUBLIC_URL}${VERIFY}/${token}`);
    const user = await s.gw.gateway.store.users.findUserByEmail(who.email);
    expect(user?.emailVerifiedAt).toBeUndefined();
    // The store keeps the token's digest, never the token.
    expect(await s.gw.gateway.store.sso.readSsoRecord('email-verification', token)).toBeNull();
  });

  it('refuses the password 403 email_not_verified only when it is right; a wrong one stays 401', async () => {
    const who = await newPerson();
    await inbox.next(who.email);
    await expectError(
      await logIn({ ...who, password: 'not-the-password' }),
      401,
      'invalid_credentials',
    );
    await expectError(
      await logIn({ email: 'nobody@example.net', password: 'x-password-1' }),
      401,
      'invalid_credentials',
    );
    await expectError(await logIn(who), 403, 'email_not_verified');
    // The token endpoint (Basic through the same provePassword) is refused alike.
    const token = await fetch(`${s.gw.url}/1/token?tenant_id=x`, {
      headers: { authorization: basic(who.email, who.password) },
    });
    await expectError(token, 403, 'email_not_verified');
    // The right password mailed a new link (the first two mails: signup, then this login).
    const again = await inbox.next(who.email);
    expect(followLink(again, VERIFY, s.gw.url)).toMatch(/\/1\/email-verifications\//);
  });

  it("a GET shows the button and uses nothing (a scanner's visit); the POST verifies once; then the password signs in", async () => {
    const who = await newPerson();
    const link = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    for (let i = 0; i < 3; i++) {
      const page = await fetch(link, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expectLinkPage(page);
      const html = await page.text();
      expect(html).toContain(`<form method="post" action="${new URL(link).pathname}">`);
      expect(html).toContain('Confirm my address');
    }
    const store = s.gw.gateway.store;
    expect((await store.users.findUserByEmail(who.email))?.emailVerifiedAt).toBeUndefined();
    await expectError(await logIn(who), 403, 'email_not_verified');
    await inbox.next(who.email);

    const done = await postJson(link);
    expect(done.status).toBe(204);
    const user = await store.users.findUserByEmail(who.email);
    expect(user?.emailVerifiedAt).toEqual(expect.any(Number));
    expect((await logIn(who)).status).toBe(200);
    const events = (await userEvents(store, 'email_verified')).filter(
      (e) => e.user_email === who.email,
    );
    expect(events).toEqual([expect.objectContaining({ user_id: user?.id, source: 'api' })]);
    expect(JSON.stringify(events)).not.toContain(tokenOf(link));

    // Used: refused, as JSON and as a page; the GET too.
    await expectError(await postJson(link), 404, 'not_found');
    const reused = await fetch(link, { method: 'POST', headers: { accept: 'text/html' } });
    expect(reused.status).toBe(404);
    expectLinkPage(reused);
    expect(await reused.text()).toContain('This link does not work');
    await expectError(await fetch(link), 404, 'not_found');
  });

  it('verifies once when one link is posted many times at once', async () => {
    const who = await newPerson();
    const link = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    const answers = await Promise.all(Array.from({ length: 12 }, () => postJson(link)));
    const won = answers.findIndex((res) => res.status === 204);
    expect(won).toBeGreaterThanOrEqual(0);
    for (const [i, res] of answers.entries())
      if (i !== won) await expectError(res, 404, 'not_found');
    const store = s.gw.gateway.store;
    const events = (await userEvents(store, 'email_verified')).filter(
      (e) => e.user_email === who.email,
    );
    expect(events).toHaveLength(1);
    expect((await logIn(who)).status).toBe(200);
  });

  it('records email_verified once when two live links of one user are posted at once', async () => {
    const who = await newPerson();
    const first = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    await expectError(await logIn(who), 403, 'email_not_verified');
    const second = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    const answers = await Promise.all([postJson(first), postJson(second)]);
    // Each link is its own and works once; the address is verified once.
    expect(answers.map((res) => res.status)).toEqual([204, 204]);
    const store = s.gw.gateway.store;
    const events = (await userEvents(store, 'email_verified')).filter(
      (e) => e.user_email === who.email,
    );
    expect(events).toHaveLength(1);
  });

  it("the button's form post gets a page saying it worked, with a link to sign in", async () => {
    const who = await newPerson();
    const link = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    const res = await postForm(s.gw.url, new URL(link).pathname, {});
    expect(res.status).toBe(200);
    expectLinkPage(res);
    const html = await res.text();
    expect(html).toContain('Your e-mail address is confirmed');
    expect(html).toContain('<a href="/1/sign-in">');
  });

  it('refuses malformed and unknown tokens 404 not_found, before and after a store call alike', async () => {
    for (const token of ['x', 'A'.repeat(42), `${'A'.repeat(43)}!`, 'A'.repeat(43), '..']) {
      await expectError(await postJson(`${s.gw.url}${VERIFY}/${token}`), 404, 'not_found');
      await expectError(await fetch(`${s.gw.url}${VERIFY}/${token}`), 404, 'not_found');
    }
  });

  it('refuses a link past its 24 hours', async () => {
    const who = await newPerson();
    const link = followLink(await inbox.next(who.email), VERIFY, s.gw.url);
    // The record's TTL is the store's: move the clock it reads past it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 24 * 3600 * 1000 + 1000);
    await expectError(await postJson(link), 404, 'not_found');
    vi.useRealTimers();
    expect(
      (await s.gw.gateway.store.users.findUserByEmail(who.email))?.emailVerifiedAt,
    ).toBeUndefined();
  });

  it('builds the link from publicUrl, whatever Host and X-Forwarded-Host say', async () => {
    const who = await newPerson({ host: 'evil.example', 'x-forwarded-host': 'evil.example' });
    const mail = await inbox.next(who.email);
    expect(mail.text).not.toContain('evil.example');
    expect(mail.html).not.toContain('evil.example');
    followLink(mail, VERIFY, s.gw.url);
  });

  it('mails new links at most perEmail times per address and window (a stranger cannot mail-bomb)', async () => {
    const who = await newPerson();
    // The signup's mail is the first; each right password mails one more, up to the bound.
    for (let i = 0; i < PER_EMAIL + 3; i++)
      await expectError(await logIn(who), 403, 'email_not_verified');
    for (let i = 0; i < PER_EMAIL; i++) await inbox.next(who.email);
    await expect(inbox.next(who.email, { timeoutMs: 1500 })).rejects.toThrow(/no mail/);
  });
});

describe('the sign-in page', () => {
  it('says so in a sentence after the right password, and mails a new link; a wrong one says nothing of it', async () => {
    const who = await newPerson();
    await inbox.next(who.email);
    const page = await openSignIn(s.gw.url);
    const post = (password: string) =>
      postForm(
        s.gw.url,
        '/1/sign-in',
        { csrf_token: page.token, email: who.email, password },
        { cookie: page.preSession },
      );
    const wrong = await post('not-the-password');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('not verified');
    const right = await post(who.password);
    expect(right.status).toBe(403);
    expect(right.headers.get('set-cookie') ?? '').not.toContain('tg_session=');
    expect(await right.text()).toContain(
      'Your e-mail address is not verified yet. We have mailed you a link',
    );
    followLink(await inbox.next(who.email), VERIFY, s.gw.url);
  });
});

describe('signup.verifyEmail: false', () => {
  const off = fixtureSuite({}, () => ({
    ...mailedConfig(inbox),
    signup: { enabled: true, verifyEmail: false },
  }));
  it('mails nothing at signup and lets the password sign in', async () => {
    const who = { email: 'unchecked@example.net', password: 'unchecked-password-1' };
    expect((await signUp(off.gw.url, who)).status).toBe(201);
    const res = await fetch(`${off.gw.url}/1/users/current/tenants`, {
      headers: { authorization: basic(who.email, who.password) },
    });
    expect(res.status).toBe(200);
    await expect(inbox.next(who.email, { timeoutMs: 1000 })).rejects.toThrow(/no mail/);
  });
});
