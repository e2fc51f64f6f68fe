/**
 * Issue 45, password reset: a real gateway mailing a real SMTP inbox, the
 * mailed link followed. `POST /1/password-resets` answers 202 the same for
 * a known and an unknown address, before anything depends on it; the link
 * (on `publicUrl`, 30 minutes, once) shows a new-password form on GET and
 * sets the password on POST, ending every token, refresh family and browser
 * session of its user and marking the address verified. Then the attacks:
 * enumeration by answer and by work, reuse, expiry, another user's link,
 * host poisoning, a scanner's GET, the per-IP and per-address bounds.
 */
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { refreshAt } from '../../support/account-requests.js';
import {
  askReset,
  expectLinkPage,
  followLink,
  mailedConfig,
  postJson,
  tokenOf,
  userEvents,
} from '../../support/account-mail.js';
import { expectError } from '../../support/expect-error.js';
import { basic, bearer } from '../../support/gateway.js';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { startMailInbox, type MailInbox } from '../../support/mail-inbox.js';
import { openSignIn, postForm, SESSIONS, cookiePair } from '../../support/sign-in-page.js';
import type { Accounts } from '../../../src/auth/accounts.js';
import { mailCounters, type AccountMailDeps } from '../../../src/identity/account-mail.js';
import { requestPasswordReset } from '../../../src/identity/password-reset.js';
import type { MailMessage } from '../../../src/mail/mailer.js';
import { createMemoryStore } from '../../../src/store/index.js';

const RESETS = '/1/password-resets';
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
const s = fixtureSuite(
  {},
  () => ({
    ...mailedConfig(inbox),
    // Verified at once, so that the subject here is the reset alone.
    signup: { enabled: true, verifyEmail: false },
    sessions: SESSIONS,
    tokens: { refresh: { enabled: true } },
    limits: { passwordReset: { perEmail: 3, perIp: 1000, windowSeconds: 3600 } },
  }),
  { logged: true },
);

interface Person {
  email: string;
  password: string;
}

/** A new person with a password (signed up: 201). */
async function newPerson(): Promise<Person> {
  const who = { email: `reset${++n}@example.net`, password: `old-password-${n}-long` };
  const res = await postJson(`${s.gw.url}/1/users`, who);
  expect(res.status).toBe(201);
  return who;
}

const logIn = (who: Person) =>
  fetch(`${s.gw.url}/1/users/current/tenants`, {
    headers: { authorization: basic(who.email, who.password) },
  });

/** Asks a reset for `who` (202) and follows the mailed link: its URL on the test gateway. */
async function resetLink(who: Person): Promise<string> {
  expect((await askReset(s.gw.url, who.email)).status).toBe(202);
  return followLink(await inbox.next(who.email), RESETS, s.gw.url);
}

/** The answer's status, headers (but its request id) and body. */
async function answerOf(res: Response) {
  const headers = Object.fromEntries(
    [...res.headers].filter(([name]) => !['x-request-id', 'date'].includes(name)),
  );
  return { status: res.status, headers, body: await res.text() };
}

describe('asking for a reset', () => {
  it('answers 202 with the same answer for a known and an unknown address; only the known one is mailed', async () => {
    const who = await newPerson();
    const known = await answerOf(await askReset(s.gw.url, who.email));
    const unknown = await answerOf(await askReset(s.gw.url, 'nobody-here@example.net'));
    expect(known.status).toBe(202);
    expect(unknown).toEqual(known);
    expect(JSON.parse(known.body)).toEqual({
      message:
        'If an account has this address, a link to choose a new password is on its way to it.',
    });
    const mail = await inbox.next(who.email);
    expect(mail.subject).toBe('Reset your password');
    const link = followLink(mail, RESETS, s.gw.url);
    expect(mail.subject).not.toContain(tokenOf(link));
    await expect(inbox.next('nobody-here@example.net', { timeoutMs: 1000 })).rejects.toThrow(
      /no mail/,
    );
    // Audited only for the address that has an account, never with the token.
    const requested = await userEvents(s.gw.gateway.store, 'password_reset_requested');
    expect(requested.filter((e) => e.user_email === who.email)).toHaveLength(1);
    expect(requested.some((e) => e.actor === 'nobody-here@example.net')).toBe(false);
    expect(JSON.stringify(requested)).not.toContain(tokenOf(link));
  });

  it('refuses a malformed address 400 and an unknown field, whoever has an account', async () => {
    await expectError(await askReset(s.gw.url, 'not an address'), 400, 'invalid_request');
    await expectError(
      await postJson(`${s.gw.url}${RESETS}`, { email: 'a@example.net', x: 1 }),
      400,
      'invalid_request',
    );
  });

  it('builds the link from publicUrl, whatever Host and X-Forwarded-Host say', async () => {
    const who = await newPerson();
    const res = await askReset(s.gw.url, who.email, {
      host: 'evil.example',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'http',
    });
    expect(res.status).toBe(202);
    const mail = await inbox.next(who.email);
    expect(`${mail.text}${mail.html}`).not.toContain('evil.example');
    followLink(mail, RESETS, s.gw.url);
  });

  it('sends nothing more past perEmail per address, still answering 202', async () => {
    const who = await newPerson();
    for (let i = 0; i < 5; i++) expect((await askReset(s.gw.url, who.email)).status).toBe(202);
    for (let i = 0; i < 3; i++) await inbox.next(who.email);
    await expect(inbox.next(who.email, { timeoutMs: 1500 })).rejects.toThrow(/no mail/);
  });

  it('has a page with the e-mail form, whose post gets the same page for every address', async () => {
    const page = await fetch(`${s.gw.url}${RESETS}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<form method="post" action="${RESETS}">`);
    const who = await newPerson();
    const known = await postForm(s.gw.url, RESETS, { email: who.email });
    const unknown = await postForm(s.gw.url, RESETS, { email: 'no-one@example.net' });
    expect(known.status).toBe(202);
    expect(await known.text()).toBe(await unknown.text());
    followLink(await inbox.next(who.email), RESETS, s.gw.url);
    // The sign-in page links to it.
    expect((await openSignIn(s.gw.url)).html).toContain(
      `<a href="${RESETS}">Forgot your password?</a>`,
    );
  });
});

describe('the mailed link', () => {
  it('GET shows the new-password form and uses nothing; POST sets the password and ends every session', async () => {
    const who = await newPerson();
    const store = s.gw.gateway.store;
    // Sessions of every kind, begun with the old password.
    const grant = await fetch(
      `${s.gw.url}/1/token?tenant_id=${(await store.users.findUserByEmail(who.email))?.personalTenantId}`,
      {
        headers: { authorization: basic(who.email, who.password) },
      },
    );
    const { access_token: access, refresh_token: refresh } = (await grant.json()) as Record<
      string,
      string
    >;
    const signIn = await openSignIn(s.gw.url);
    const signedIn = await postForm(
      s.gw.url,
      '/1/sign-in',
      { csrf_token: signIn.token, ...who },
      { cookie: signIn.preSession },
    );
    expect(signedIn.status).toBe(303);
    const session = cookiePair(signedIn, 'tg_session');

    const link = await resetLink(who);
    for (let i = 0; i < 2; i++) {
      const page = await fetch(link, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expectLinkPage(page);
      const html = await page.text();
      expect(html).toContain(`<form method="post" action="${new URL(link).pathname}">`);
      expect(html).toContain('autocomplete="new-password"');
    }
    expect((await logIn(who)).status).toBe(200);

    const password = 'a-brand-new-password-1';
    expect((await postJson(link, { password })).status).toBe(204);
    // Ended before the answer: the access token, the refresh family, the browser session.
    await expectError(
      await fetch(`${s.gw.url}/1/tenants/current`, { headers: { authorization: bearer(access) } }),
      401,
      'invalid_token',
    );
    await expectError(await refreshAt(s.gw.url, refresh), 400, 'invalid_grant');
    await expectError(
      await fetch(`${s.gw.url}/1/sessions`, { headers: { cookie: session } }),
      401,
      'invalid_token',
    );
    // The old password is refused, the new one signs in; the address is verified now.
    await expectError(await logIn(who), 401, 'invalid_credentials');
    expect((await logIn({ ...who, password })).status).toBe(200);
    const user = await store.users.findUserByEmail(who.email);
    expect(user?.emailVerifiedAt).toEqual(expect.any(Number));
    const reset = (await userEvents(store, 'password_reset')).filter(
      (e) => e.user_email === who.email,
    );
    expect(reset).toEqual([expect.objectContaining({ user_id: user?.id, source: 'api' })]);
    expect(JSON.stringify(reset)).not.toContain(tokenOf(link));

    // Once: the link is used up.
    await expectError(
      await postJson(link, { password: 'yet-another-password-1' }),
      404,
      'not_found',
    );
    await expectError(await fetch(link), 404, 'not_found');
    expect((await logIn({ ...who, password })).status).toBe(200);

    // The access log names the route, never the token.
    await vi.waitFor(() => expect(s.text).toContain('/1/password-resets/…'));
    expect(s.text).not.toContain(tokenOf(link));
  });

  it('refuses a password outside 8..72 bytes 400, and the link stays good', async () => {
    const who = await newPerson();
    const link = await resetLink(who);
    await expectError(await postJson(link, { password: 'short' }), 400, 'invalid_request');
    await expectError(await postJson(link, { password: 'é'.repeat(37) }), 400, 'invalid_request');
    expect((await postJson(link, { password: 'long-enough-password' })).status).toBe(204);
  });

  it("changes only its own user's password: another user's link is just theirs", async () => {
    const ann = await newPerson();
    const ben = await newPerson();
    const annLink = await resetLink(ann);
    const benLink = await resetLink(ben);
    expect((await postJson(annLink, { password: 'ann-new-password-1' })).status).toBe(204);
    expect((await logIn(ben)).status).toBe(200);
    expect((await logIn({ ...ann, password: 'ann-new-password-1' })).status).toBe(200);
    expect((await postJson(benLink, { password: 'ben-new-password-1' })).status).toBe(204);
    expect((await logIn({ ...ann, password: 'ann-new-password-1' })).status).toBe(200);
    expect((await logIn({ ...ben, password: 'ben-new-password-1' })).status).toBe(200);
  });

  it('dies with a password set since it was mailed', async () => {
    const who = await newPerson();
    const first = await resetLink(who);
    const second = await resetLink(who);
    expect((await postJson(second, { password: 'the-second-links-password' })).status).toBe(204);
    await expectError(
      await postJson(first, { password: 'the-first-links-password' }),
      404,
      'not_found',
    );
  });

  it('sets the password once when one link is posted many times at once', async () => {
    const who = await newPerson();
    const link = await resetLink(who);
    const passwords = Array.from({ length: 12 }, (_, i) => `raced-password-${i}-long`);
    const answers = await Promise.all(passwords.map((password) => postJson(link, { password })));
    const won = answers.findIndex((res) => res.status === 204);
    expect(won).toBeGreaterThanOrEqual(0);
    for (const [i, res] of answers.entries())
      if (i !== won) await expectError(res, 404, 'not_found');
    expect((await logIn({ ...who, password: passwords[won] as string })).status).toBe(200);
    const store = s.gw.gateway.store;
    const events = (await userEvents(store, 'password_reset')).filter(
      (e) => e.user_email === who.email,
    );
    expect(events).toHaveLength(1);
  });

  it('sets the password once when several live links of one user are posted at once', async () => {
    const who = await newPerson();
    const links = [await resetLink(who), await resetLink(who), await resetLink(who)];
    const passwords = links.map((_, i) => `link-${i}-password-long`);
    const answers = await Promise.all(
      links.map((link, i) => postJson(link, { password: passwords[i] })),
    );
    // A link dies with a password set since it was mailed: the first set kills the others.
    expect(answers.map((res) => res.status).sort()).toEqual([204, 404, 404]);
    const won = answers.findIndex((res) => res.status === 204);
    for (const [i, res] of answers.entries())
      if (i !== won) await expectError(res, 404, 'not_found');
    expect((await logIn({ ...who, password: passwords[won] as string })).status).toBe(200);
    const store = s.gw.gateway.store;
    const user = await store.users.findUserByEmail(who.email);
    // One password change: the session version moved on once.
    expect(user?.sessionVersion).toBe(1);
    const events = (await userEvents(store, 'password_reset')).filter(
      (e) => e.user_email === who.email,
    );
    expect(events).toHaveLength(1);
  });

  it('refuses a link past its 30 minutes', async () => {
    const who = await newPerson();
    const link = await resetLink(who);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 30 * 60 * 1000 + 1000);
    await expectError(await postJson(link, { password: 'too-late-password-1' }), 404, 'not_found');
    vi.useRealTimers();
    expect((await logIn(who)).status).toBe(200);
  });

  it('refuses malformed and unknown tokens 404 not_found', async () => {
    for (const token of ['x', 'A'.repeat(43), `${'A'.repeat(42)}*`]) {
      await expectError(
        await postJson(`${s.gw.url}${RESETS}/${token}`, { password: 'whatever-password' }),
        404,
        'not_found',
      );
    }
  });

  it("the page's form post gets a page saying it worked; a refusal is the form again", async () => {
    const who = await newPerson();
    const link = await resetLink(who);
    const path = new URL(link).pathname;
    const short = await postForm(s.gw.url, path, { password: 'short' });
    expect(short.status).toBe(400);
    expectLinkPage(short);
    expect(await short.text()).toContain('The password must be 8 to 72 bytes long.');
    const done = await postForm(s.gw.url, path, { password: 'a-fine-new-password' });
    expect(done.status).toBe(200);
    expectLinkPage(done);
    expect(await done.text()).toContain('<a href="/1/sign-in">');
  });
});

describe('past limits.passwordReset.perIp', () => {
  const few = fixtureSuite({}, () => ({
    ...mailedConfig(inbox),
    limits: { passwordReset: { perEmail: 3, perIp: 2, windowSeconds: 3600 } },
  }));
  it('answers 429 with Retry-After, known address or not', async () => {
    expect((await askReset(few.gw.url, 'alice@example.com')).status).toBe(202);
    expect((await askReset(few.gw.url, 'nobody@example.net')).status).toBe(202);
    for (const email of ['alice@example.com', 'nobody@example.net']) {
      const res = await askReset(few.gw.url, email);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      await expectError(res, 429, 'too_many_requests');
    }
  });
});

describe('the work before the answer', () => {
  it('awaits nothing that depends on the address: the 202 comes while the lookup has not even begun', async () => {
    const store = createMemoryStore();
    const looked: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const find = store.users.findUserByEmail.bind(store.users);
    store.users.findUserByEmail = async (email) => {
      looked.push(email);
      await gate;
      return find(email);
    };
    const sent: MailMessage[] = [];
    const limits = { perEmail: 3, perIp: 10, windowSeconds: 60 };
    const deps: AccountMailDeps = {
      store,
      accounts: {} as Accounts,
      audit: { record: async () => undefined },
      mailer: {
        send: (m) => sent.push(m),
        idle: async () => undefined,
        close: async () => undefined,
      },
      publicUrl: 'https://gw.example.test',
      limits,
      counters: mailCounters(store, limits),
      verifyEmail: false,
      log: pino({ level: 'silent' }),
    };
    const request = {
      clientIp: '192.0.2.1',
      actorOf: (actor: string) => ({ source: 'api' as const, actor }),
    };
    await requestPasswordReset(deps, request, 'someone@example.net');
    expect(looked).toEqual([]);
    await vi.waitFor(() => expect(looked).toEqual(['someone@example.net']));
    release();
    await store.close();
  });
});
