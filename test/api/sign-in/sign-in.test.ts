/**
 * The sign-in page and the sign-out (`src/api/sign-in/`) against a real
 * gateway on the memory store, over real sockets, as a browser talks to it:
 * the page's headers and escaping, login CSRF, the password step sharing
 * the Basic login's check and limits, the tenant step, `return_to`, the
 * cookies, and the sign-out.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditRecorder } from '../../../src/audit/recorder.js';
import { createSessionGuard } from '../../../src/auth/revocation/sessions.js';
import type { BrowserSessions } from '../../../src/auth/sessions/browser-sessions.js';
import { createBrowserSessions } from '../../../src/auth/sessions/session-service.js';
import { adminUrlOf, basic, startTestGateway } from '../../support/gateway.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { parseSamples, total } from '../../support/prometheus-text.js';
import { formTokenOf } from '../../../src/api/sign-in/form-token.js';
import {
  SESSIONS,
  cookiePair,
  hiddenField,
  openSignIn,
  postForm,
  setCookie,
  signIn,
} from '../../support/sign-in-page.js';

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'";
/** Signed up in `beforeAll`: one tenant (its personal one), for the lockout. */
const CAROL = { email: 'carol@example.com', password: 'carol-password-1' };
const DAVE = { email: 'dave@example.com', password: 'dave-password-1' };
const JSON_ONLY = { accept: 'application/json' };

let fx: IdentityFixture;
let base: string;
/** The service on the gateway's own store, with a guard of its own: what any instance would judge. */
let judge: BrowserSessions;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({
    sessions: SESSIONS,
    limits: { login: { perEmail: 4, perIp: 1000, windowSeconds: 600 } },
  });
  base = fx.gw.url;
  const store = fx.gw.gateway.store;
  const log = pino({ level: 'silent' });
  judge = createBrowserSessions({
    store,
    guard: createSessionGuard(store, { clockSkewSeconds: 30 }),
    roleScopes: { current: { admin: [], member: [] } },
    config: { idleTimeoutSeconds: 3600, absoluteTimeoutSeconds: 86_400 },
    tokens: { issuer: 'tenant-gateway', audience: 'api', clockSkewSeconds: 30 },
    audit: createAuditRecorder({ streams: store.auditLog({ maxEventsPerStream: 100 }), log }),
    log,
  });
  for (const user of [CAROL, DAVE]) {
    const res = await fetch(`${base}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    expect(res.status).toBe(201);
  }
});
afterAll(() => fx?.close());

/** The session cookie's value a sign-in answer set. */
function sessionValue(res: Response): string {
  return (setCookie(res, 'tg_session') as string)
    .split(';')[0]
    ?.slice('tg_session='.length) as string;
}

/** Whether `browserSessions.principal` admits the cookie's value. */
async function alive(value: string): Promise<boolean> {
  try {
    await judge.principal(value);
    return true;
  } catch (err) {
    expect((err as { code?: string }).code).toBe('invalid_token');
    return false;
  }
}

/** The audit events of the users' stream (logins), as recorded. */
async function userEvents(): Promise<Record<string, unknown>[]> {
  const entries = await fx.gw.gateway.store.auditLog({ maxEventsPerStream: 1000 }).read('users', 0);
  return entries.map((entry) => JSON.parse(entry.event) as Record<string, unknown>);
}

const requestId = (res: Response) => res.headers.get('x-request-id');

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${adminUrlOf(fx.gw)}/metrics`)).text();
  return total(parseSamples(text), name, labels);
}

describe('the page', () => {
  it('is HTML without script, framing, caching or sniffing, with a pre-session cookie', async () => {
    const page = await openSignIn(base, '?return_to=%2Forders');
    const h = page.res.headers;
    expect(h.get('content-type')).toBe('text/html; charset=utf-8');
    expect(h.get('content-security-policy')).toBe(CSP);
    expect(h.get('x-frame-options')).toBe('DENY');
    expect(h.get('cache-control')).toBe('no-store');
    expect(h.get('referrer-policy')).toBe('same-origin');
    expect(h.get('x-content-type-options')).toBe('nosniff');
    expect(page.html).not.toMatch(/<script|\son[a-z]+=|style=/i);
    expect(setCookie(page.res, 'tg_signin')).toMatch(
      /^tg_signin=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    // The token is bound to the cookie, and is not the cookie.
    expect(page.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.preSession).not.toContain(page.token);
    expect(hiddenField(page.html, 'return_to')).toBe('/orders');
    expect(page.html).toContain('<html lang="en">');
    expect(page.html).toMatch(
      /<label for="email">[^<]+<\/label>\s*<input id="email"[^>]*autocomplete="username"/,
    );
    expect(page.html).toMatch(
      /<input id="password"[^>]*type="password" autocomplete="current-password"/,
    );
    // No company sign-in without sso.enabled.
    expect(page.html).not.toContain('/1/sign-in/sso');
  });

  it('serves its stylesheet from a hashed name, cached for a year, with an ETag', async () => {
    const { html } = await openSignIn(base);
    const href = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1] as string;
    expect(href).toMatch(/^\/1\/sign-in\/style\.[A-Za-z0-9_-]{16}\.css$/);
    const css = await fetch(`${base}${href}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await css.text()).toContain(':focus-visible');
    const again = await fetch(`${base}${href}`, {
      headers: { 'if-none-match': css.headers.get('etag') as string },
    });
    expect(again.status).toBe(304);
    expect((await fetch(`${base}/1/sign-in/style.0000000000000000.css`)).status).toBe(404);
  });

  it('escapes everything it echoes: return_to, tenant_id and the e-mail typed', async () => {
    const evil = `/x?a="><script>alert(1)</script>&b='&amp;c=\``;
    const tenant = `"><script>alert(2)</script>`;
    const page = await openSignIn(
      base,
      `?return_to=${encodeURIComponent(evil)}&tenant_id=${encodeURIComponent(tenant)}`,
    );
    expect(page.html).not.toContain('<script');
    expect(page.html).toContain(
      'value="/x?a=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;b=&#39;&amp;amp;c=&#96;"',
    );
    expect(page.html).toContain('value="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"');
    const email = `"><script>alert(3)</script>@example.com`;
    const { res } = await signIn(base, { email, password: 'whatever-1' });
    const html = await res.text();
    expect(res.status).toBe(401);
    expect(html).not.toContain('<script');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;@example.com"');
  });
});

describe('login CSRF', () => {
  it('refuses a post without the pre-session cookie, with a wrong token, cross-site or from a foreign origin', async () => {
    const page = await openSignIn(base);
    const fields = { email: ALICE.email, password: ALICE.password, return_to: '/app' };
    const noCookie = await postForm(base, '/1/sign-in', { ...fields, csrf_token: page.token });
    const otherToken = await postForm(
      base,
      '/1/sign-in',
      { ...fields, csrf_token: (await openSignIn(base)).token },
      { cookie: page.preSession },
    );
    const noToken = await postForm(base, '/1/sign-in', fields, { cookie: page.preSession });
    const tossed = await postForm(
      base,
      '/1/sign-in',
      { ...fields, csrf_token: page.token },
      { cookie: `${page.preSession}; ${(await openSignIn(base)).preSession}` },
    );
    const good = { ...fields, csrf_token: page.token };
    const crossSite = await postForm(base, '/1/sign-in', good, {
      cookie: page.preSession,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    const sameSite = await postForm(base, '/1/sign-in', good, {
      cookie: page.preSession,
      headers: { 'sec-fetch-site': 'same-site' },
    });
    const foreignOrigin = await postForm(base, '/1/sign-in', good, {
      cookie: page.preSession,
      headers: { 'sec-fetch-site': '', origin: 'http://evil.example' },
    });
    for (const res of [noCookie, otherToken, noToken, tossed, crossSite, sameSite, foreignOrigin]) {
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(setCookie(res, 'tg_session')).toBeUndefined();
      const html = await res.text();
      expect(html).toContain('role="alert"');
      expect(html).toContain('expired or was sent from another site');
      // A new form that can be sent again from here: a token for the cookie it carries.
      expect(hiddenField(html, 'csrf_token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(html).not.toContain(ALICE.password);
    }
  });

  it('answers a client that asks for JSON with the JSON error', async () => {
    const res = await postForm(
      base,
      '/1/sign-in',
      { email: ALICE.email, password: ALICE.password, csrf_token: 'x' },
      { headers: JSON_ONLY },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({
      error: 'csrf_refused',
      error_description: 'The sign-in form has expired.',
    });
  });

  it('accepts the same origin by Origin when a browser sends no Fetch Metadata', async () => {
    const { res } = await signIn(
      base,
      { email: DAVE.email, password: DAVE.password },
      { headers: { 'sec-fetch-site': '', origin: base } },
    );
    expect(res.status).toBe(303);
  });
});

describe('the password step', () => {
  it('gives an unknown e-mail and a wrong password one answer, through the Basic login’s check', async () => {
    const failures = () =>
      metric('tenant_gateway_login_failures_total', { reason: 'invalid_credentials' });
    const wrongs = () => metric('tenant_gateway_sign_ins_total', { outcome: 'wrong_credentials' });
    const [failed, wrong] = [await failures(), await wrongs()];
    const asJson = { headers: JSON_ONLY };
    const unknown = await signIn(
      base,
      { email: 'nobody@example.com', password: 'pw-123456' },
      asJson,
    );
    const mistyped = await signIn(base, { email: BOB.email, password: 'pw-123456' }, asJson);
    expect([unknown.res.status, mistyped.res.status]).toEqual([401, 401]);
    expect(await unknown.res.text()).toBe(await mistyped.res.text());
    // Both went through accounts.logIn: counted and audited as Basic logins are.
    expect(await failures()).toBe(failed + 2);
    expect(await wrongs()).toBe(wrong + 2);
    for (const res of [unknown.res, mistyped.res]) {
      const event = (await userEvents()).find((e) => e['request_id'] === requestId(res));
      expect(event).toMatchObject({ event: 'login_failed', source: 'api' });
    }
    expect((await userEvents()).map((e) => e['user_email'])).toEqual(
      expect.arrayContaining(['nobody@example.com', BOB.email]),
    );

    const page = await signIn(base, { email: BOB.email, password: 'secret-typed-1' });
    const html = await page.res.text();
    expect(page.res.status).toBe(401);
    expect(page.res.headers.get('www-authenticate')).toBeNull();
    expect(html).toContain('E-mail or password is wrong.');
    expect(html).toMatch(
      /<p id="sign-in-alert" class="alert" role="alert" tabindex="-1" autofocus>/,
    );
    expect(html).toMatch(
      /<input id="email"[^>]*value="bob@example.com" aria-describedby="sign-in-alert"/,
    );
    expect(html).not.toContain('secret-typed-1');
    expect(setCookie(page.res, 'tg_session')).toBeUndefined();
  });

  it('locks out after the limit, counting Basic logins and the page together, 429 with Retry-After', async () => {
    const wrongBasic = await fetch(`${base}/1/users/current/tenants`, {
      headers: { authorization: basic(CAROL.email, 'wrong-password-1') },
    });
    expect(wrongBasic.status).toBe(401);
    for (let i = 0; i < 3; i++) {
      const { res } = await signIn(base, { email: CAROL.email, password: `wrong-password-${i}` });
      expect(res.status).toBe(401);
    }
    // perEmail: 4 spent; even the right password is refused now.
    const { res } = await signIn(base, CAROL);
    const html = await res.text();
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(html).toMatch(/Too many attempts\. Please try again in \d+ seconds\./);
    expect(setCookie(res, 'tg_session')).toBeUndefined();
  });

  it('refuses empty fields as a bad request, not as a login', async () => {
    const { res } = await signIn(base, { email: ALICE.email, password: '' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Enter your e-mail and your password.');
  });
});

describe('the tenant step', () => {
  it('signs a user of one tenant straight in: 303 to return_to with the session cookie', async () => {
    const { res } = await signIn(base, { ...DAVE, return_to: '/orders?x=1' });
    expect(res.status).toBe(303);
    const login = (await userEvents()).find((e) => e['request_id'] === requestId(res));
    expect(login).toMatchObject({ event: 'login_succeeded', user_email: DAVE.email });
    expect(res.headers.get('location')).toBe('/orders?x=1');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(setCookie(res, 'tg_session')).toMatch(
      /^tg_session=ses_[^;]+\.[^;]+; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/,
    );
    expect(setCookie(res, 'tg_signin')).toBe(
      'tg_signin=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax',
    );
  });

  it('lets a user of several tenants choose one, with the password kept server-side and used once', async () => {
    const { page, res } = await signIn(base, { ...ALICE, return_to: '/after' });
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(setCookie(res, 'tg_session')).toBeUndefined();
    expect(html).not.toContain(ALICE.password);
    expect(html).toContain('<legend>');
    expect(html).toMatch(/<input type="radio" id="tenant-\d" name="tenant_id" value="acme"/);
    expect(html).toContain('<label for="tenant-');
    expect(html).toContain('>Acme</label>');
    const choose = {
      step: 'tenant',
      tenant_id: 'acme',
      csrf_token: hiddenField(html, 'csrf_token') as string,
    };
    // The pending sign-in is under the pre-session cookie the choice page set.
    const cookie = cookiePair(res, 'tg_signin');
    expect(cookie).not.toBe(page.preSession);
    const chosen = await postForm(base, '/1/sign-in', choose, { cookie });
    expect(chosen.status).toBe(303);
    expect(chosen.headers.get('location')).toBe('/after');
    expect(setCookie(chosen, 'tg_session')).toMatch(/^tg_session=ses_/);
    // Single use: the same choice again has nothing to continue.
    const again = await postForm(base, '/1/sign-in', choose, {
      cookie,
      headers: JSON_ONLY,
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('keeps the proven password under a new pre-session cookie: one planted before it finishes nothing', async () => {
    // A value someone chose and set in the browser (an app's Set-Cookie on this host).
    const planted = `tg_signin=${'P'.repeat(43)}`;
    const page = await openSignIn(base, '?return_to=%2Fafter');
    const kept = await postForm(
      base,
      '/1/sign-in',
      { csrf_token: formTokenOf('P'.repeat(43)), return_to: '/after', ...ALICE },
      { cookie: planted },
    );
    const html = await kept.text();
    expect(kept.status).toBe(200);
    expect(html).toContain('name="tenant_id"');
    // Whoever planted it knows the value, and so the form token: the choice is not theirs to make.
    const choose = { step: 'tenant', tenant_id: 'acme', csrf_token: formTokenOf('P'.repeat(43)) };
    const hijack = await postForm(base, '/1/sign-in', choose, {
      cookie: planted,
      headers: JSON_ONLY,
    });
    expect(hijack.status).toBe(400);
    expect(setCookie(hijack, 'tg_session')).toBeUndefined();
    // The browser goes on with the cookie the answer set.
    const renewed = cookiePair(kept, 'tg_signin');
    expect(renewed).not.toBe(planted);
    expect(renewed).not.toBe(page.preSession);
    const token = hiddenField(html, 'csrf_token') as string;
    const chosen = await postForm(
      base,
      '/1/sign-in',
      { ...choose, csrf_token: token },
      {
        cookie: renewed,
      },
    );
    expect(chosen.status).toBe(303);
    expect(setCookie(chosen, 'tg_session')).toMatch(/^tg_session=ses_/);
  });

  it('refuses a tenant the user is not a member of as one that does not exist', async () => {
    const answers = [];
    for (const tenant of ['globex', 'no-such-tenant']) {
      const { res } = await signIn(base, ALICE, {
        query: `?tenant_id=${tenant}`,
        headers: JSON_ONLY,
      });
      answers.push([res.status, await res.text()]);
    }
    // tenant_id from the page's hidden field: the post carries it.
    const viaForm = await signIn(base, { ...ALICE, tenant_id: 'globex' });
    expect(answers[0]?.[0]).toBe(403);
    expect(answers[0]).toEqual(answers[1]);
    expect(viaForm.res.status).toBe(403);
    expect(await viaForm.res.text()).toContain('This account cannot sign in to that organisation.');
    expect(setCookie(viaForm.res, 'tg_session')).toBeUndefined();
  });
});

describe('return_to', () => {
  it.each([
    '//evil.example/',
    '/\\evil.example',
    '/%2F%2Fevil.example',
    '/%5Cevil.example',
    'https://evil.example/',
    'https://app.example.test@evil.example/',
    'javascript:alert(1)',
    '\t//evil.example',
    'https:evil.example',
    '/x%0d%0aSet-Cookie:%20a=b',
    'https://app.example.test:8443/',
  ])('%j lands on /', async (returnTo) => {
    const { res } = await signIn(base, { ...DAVE, return_to: returnTo });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
  });

  it('goes to a host of sessions.returnHosts (http: with the cookie not Secure)', async () => {
    const { res } = await signIn(base, { ...DAVE, return_to: 'http://app.example.test/home' });
    expect(res.headers.get('location')).toBe('http://app.example.test/home');
  });
});

describe('sessions begun and ended', () => {
  it('are not served without sessions.enabled', async () => {
    const off = await startTestGateway({ ...fx.config, sessions: { enabled: false } });
    try {
      for (const [method, path] of [
        ['GET', '/1/sign-in'],
        ['POST', '/1/sign-in'],
        ['POST', '/1/sign-out'],
      ])
        expect((await fetch(`${off.url}${path}`, { method })).status, `${method} ${path}`).toBe(
          404,
        );
    } finally {
      await off.close();
    }
  });

  it('ends a session cookie the browser already had before a new one begins (session fixation)', async () => {
    const first = sessionValue((await signIn(base, DAVE)).res);
    expect(await alive(first)).toBe(true);
    const { res } = await signIn(base, DAVE, { cookie: `tg_session=${first}` });
    const second = sessionValue(res);
    expect(second.split('.')[0]).not.toBe(first.split('.')[0]);
    expect(await alive(first)).toBe(false);
    expect(await alive(second)).toBe(true);
  });

  it('signs out: the session ended, the cookie cleared, 303 to return_to or the sign-in page', async () => {
    const value = sessionValue((await signIn(base, DAVE)).res);
    const cookie = `tg_session=${value}`;
    const out = await postForm(base, '/1/sign-out', { return_to: '/bye' }, { cookie });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/bye');
    expect(setCookie(out, 'tg_session')).toBe(
      'tg_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax',
    );
    expect(await alive(value)).toBe(false);
    // Again, with the dead cookie, and with none: the same 303, the cookie cleared.
    for (const again of [cookie, undefined]) {
      const res = await postForm(base, '/1/sign-out', {}, { cookie: again });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/1/sign-in');
      expect(setCookie(res, 'tg_session')).toMatch(/^tg_session=; .*Max-Age=0/);
    }
    const tricked = await postForm(base, '/1/sign-out', { return_to: '//evil.example' });
    expect(tricked.headers.get('location')).toBe('/');
  });

  it('refuses a sign-out from another site and ends nothing', async () => {
    const value = sessionValue((await signIn(base, DAVE)).res);
    const refusals: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': '', origin: 'http://evil.example' },
      { 'sec-fetch-site': '' },
    ];
    for (const headers of refusals) {
      const res = await postForm(
        base,
        '/1/sign-out',
        {},
        { cookie: `tg_session=${value}`, headers },
      );
      expect(res.status).toBe(403);
      expect(setCookie(res, 'tg_session')).toBeUndefined();
    }
    const json = await postForm(
      base,
      '/1/sign-out',
      {},
      {
        cookie: `tg_session=${value}`,
        headers: { 'sec-fetch-site': 'cross-site', ...JSON_ONLY },
      },
    );
    expect(((await json.json()) as { error: string }).error).toBe('csrf_refused');
    expect(await alive(value)).toBe(true);
  });
});
