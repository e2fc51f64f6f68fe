/**
 * Issue 44's "Done means", as a person in Chromium does it: two gateway
 * instances on one redis-server (`a`, `b`), a real web app behind an
 * `auth: session` route that shows the identity headers it received, and
 * oidc-provider as acme's and globex's IdPs.
 *
 * - A page of the app sends the browser to sign in; the person types an
 *   e-mail and a password (or picks "sign in with your company" and signs in
 *   at the tenant's IdP) and lands on `return_to`, which shows who they are.
 * - A same-origin form post reaches the app; the same post from a page of
 *   another origin on the same site is refused 403 `csrf_refused`.
 * - Signing out on one instance kills the cookie on the other; a password
 *   change on one ends the session on the other before its answer; a logout
 *   at the IdP (oidc-provider posting its back-channel logout token to one
 *   instance) ends the session on the other.
 *
 * The browser's cookies are per host, not per port: both instances listen on
 * 127.0.0.1, so the one cookie jar carries the session to both, as behind a
 * load balancer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowser, startPageOrigin, type PageOrigin } from '../support/browser.js';
import { basic, type TestGateway } from '../support/gateway.js';
import { ALICE, BOB } from '../support/identity-fixture.js';
import type { TestIdp } from '../support/oidc-idp.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';
import { ACME_CLIENT, GLOBEX_CLIENT } from '../support/token-exchange.js';
import { useTwoInstances } from '../support/two-instances.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { setCompanyIdps } from '../support/company-idps.js';

const COOKIE = 'tg_session';

let server: TestRedisServer;
let keyDir: string;
let keyFile: string;
let app: Upstream;
let otherOrigin: PageOrigin;
let browser: Browser;

/** The identity headers the app saw on its last request, and the notes posted to it. */
const seen: { headers?: IncomingHttpHeaders; notes: string[] } = { notes: [] };

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The app: a page showing who it was asked for, a form posting a note, the sign-out form. */
function appPage(headers: IncomingHttpHeaders, saved?: string): string {
  const who = ['x-user-email', 'x-tenant-id', 'x-user-id', 'x-scope']
    .map((name) => `<dt>${name}</dt><dd id="${name}">${escape(String(headers[name] ?? ''))}</dd>`)
    .join('');
  return `<!doctype html><html lang="en"><head><title>App</title></head><body><main>
<h1>App</h1><dl>${who}</dl>${saved === undefined ? '' : `<p id="saved">saved: ${escape(saved)}</p>`}
<form method="post" action="/app/notes"><label for="note">Note</label><input id="note" name="note"><button id="save">Save</button></form>
<form method="post" action="/1/sign-out"><button id="sign-out">Sign out</button></form>
</main></body></html>`;
}

const idps = useTestIdps({
  acme: { alg: 'RS256', clients: [ACME_CLIENT], accounts: { ann: 'ann@acme.test' } },
  globex: { alg: 'ES256', clients: [GLOBEX_CLIENT], accounts: { gus: 'gus@globex.test' } },
});

beforeAll(async () => {
  server = await startRedisServer();
  keyDir = mkdtempSync(join(tmpdir(), 'tg-browser-e2e-'));
  keyFile = join(keyDir, 'sso.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
  app = await startUpstream((req, res, record) => {
    req.on('end', () => {
      seen.headers = record.headers;
      const note =
        req.method === 'POST' ? `note by ${String(req.headers['x-user-email'])}` : undefined;
      if (note !== undefined) seen.notes.push(note);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(appPage(req.headers, note));
    });
  });
  otherOrigin = await startPageOrigin();
  browser = await startBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await otherOrigin?.close();
  await app?.close();
  await server?.stop();
  if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
});

const t = useTwoInstances(
  () => server,
  () => ({
    sessions: { enabled: true, cookie: { secure: false } },
    sso: loopbackSso(idps.ca, { secretsKeyFile: keyFile }),
    routes: [{ prefix: '/app', upstream: app.url, auth: 'session' }],
    limits: {
      exchange: { perIp: 10_000, windowSeconds: 60 },
      ssoLogin: { perIp: 10_000, windowSeconds: 600 },
    },
  }),
);

/** acme's and globex's admins set their IdPs; the IdPs know both instances' callbacks. */
beforeAll(async () => {
  const store = t.a.gateway.store;
  for (const idp of [idps.acme, idps.globex]) {
    for (const gw of [t.a, t.b]) idp.allowRedirectUri(`${gw.url}/1/sso/callback`);
    idp.setBackchannelLogoutUri(`${t.a.url}/1/sso/backchannel-logout`);
  }
  await setCompanyIdps(t.a.url, store, idps);
}, 60_000);

async function withBrowser<T>(
  run: (page: Page, context: BrowserContext) => Promise<T>,
): Promise<T> {
  // The IdPs' certificates come from the test CA.
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/** The session cookie the browser holds for 127.0.0.1. */
async function sessionCookie(context: BrowserContext): Promise<string | undefined> {
  const cookies = await context.cookies(t.a.url);
  return cookies.find((cookie) => cookie.name === COOKIE)?.value;
}

/** Opens the app on `gw`: without a session the browser lands on the sign-in page. */
async function openApp(page: Page, gw: TestGateway): Promise<void> {
  await page.goto(`${gw.url}/app/home?tab=1`);
}

/** Types the e-mail and password, presses Enter; picks `tenant` if the page asks. */
async function signInWithPassword(page: Page, who: typeof ALICE, tenant: string): Promise<void> {
  await page.fill('input[name=email]', who.email);
  await page.fill('input[name=password]', who.password);
  await page.press('input[name=password]', 'Enter');
  await page.waitForLoadState();
  const choice = page.locator(`input[name=tenant_id][value=${tenant}]`);
  if (await choice.count()) {
    await choice.check();
    await page.locator('button[type=submit]').first().click();
    await page.waitForLoadState();
  }
}

/** "Sign in with your company", then the IdP's own login and consent pages, as a person clicks through them. */
async function signInWithCompany(page: Page, email: string, account: string): Promise<void> {
  await page.fill('#company-email', email);
  await page.press('#company-email', 'Enter');
  const atApp = (url: URL) => url.pathname === '/app/home';
  for (let step = 0; step < 6; step++) {
    await page.waitForURL((url) => url.origin.startsWith('https:') || atApp(url));
    if (atApp(new URL(page.url()))) return;
    await page.waitForLoadState();
    const before = page.url();
    const login = page.locator('input[name=login]');
    if (await login.count()) {
      await login.fill(account);
      await page.fill('input[name=password]', 'x');
    }
    await page.locator('[type=submit]').first().click();
    await page.waitForURL((url) => url.href !== before);
  }
  throw new Error(`the company sign-in did not come back to the app: ${page.url()}`);
}

const shown = (page: Page, header: string) => page.locator(`[id="${header}"]`).innerText();

/** A request with the cookie's value, as any client could send it, to `gw`'s app. */
const withCookie = (gw: TestGateway, value: string) =>
  fetch(`${gw.url}/app/probe`, { headers: { cookie: `${COOKIE}=${value}` } });

describe('a person in Chromium, two instances', () => {
  it('signs in with a password on the page and lands on return_to, where the app shows who they are', async () => {
    await withBrowser(async (page, context) => {
      await openApp(page, t.b);
      expect(new URL(page.url()).pathname).toBe('/1/sign-in');
      expect(new URL(page.url()).searchParams.get('return_to')).toBe('/app/home?tab=1');
      await signInWithPassword(page, ALICE, 'acme');
      expect(page.url()).toBe(`${t.b.url}/app/home?tab=1`);
      expect(await shown(page, 'x-user-email')).toBe(ALICE.email);
      expect(await shown(page, 'x-tenant-id')).toBe('acme');
      // The app never sees the session cookie.
      expect(String(seen.headers?.cookie ?? '')).not.toContain(COOKIE);
      // The same cookie admits on the other instance.
      await openApp(page, t.a);
      expect(await shown(page, 'x-user-email')).toBe(ALICE.email);
      expect(await sessionCookie(context)).toMatch(/^ses_/);
    });
  });

  it('posts a same-origin form; the same form from another origin of the site is refused', async () => {
    await withBrowser(async (page) => {
      await openApp(page, t.a);
      await signInWithPassword(page, ALICE, 'acme');
      await page.fill('#note', 'hello');
      await Promise.all([page.waitForNavigation(), page.click('#save')]);
      expect(await page.locator('#saved').innerText()).toBe(`saved: note by ${ALICE.email}`);
      const notes = seen.notes.length;

      // Another port of 127.0.0.1: the same site, so the Lax cookie goes along.
      const other = await otherOrigin.open(browser);
      const context = other.context();
      await context.addCookies(await page.context().cookies(t.a.url));
      await Promise.all([
        other.waitForNavigation(),
        other.evaluate(`(() => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = ${JSON.stringify(`${t.a.url}/app/notes`)};
          document.body.append(form);
          form.submit();
        })()`),
      ]);
      await other.waitForLoadState();
      expect(await other.locator('body').innerText()).toContain('csrf_refused');
      expect(seen.notes.length).toBe(notes);
      await context.close();
    });
  });

  it('signs out on one instance: the cookie is dead on the other', async () => {
    await withBrowser(async (page, context) => {
      await openApp(page, t.a);
      await signInWithPassword(page, ALICE, 'acme');
      const value = (await sessionCookie(context)) as string;
      expect((await withCookie(t.b, value)).status).toBe(200);
      await Promise.all([page.waitForNavigation(), page.click('#sign-out')]);
      expect(new URL(page.url()).pathname).toBe('/1/sign-in');
      expect(await sessionCookie(context)).toBeUndefined();
      expect((await withCookie(t.b, value)).status).toBe(401);
      expect((await withCookie(t.a, value)).status).toBe(401);
    });
  });

  it('a password change on one instance ends the browser session on the other before its answer', async () => {
    const user = await t.a.gateway.store.users.findUserByEmail(BOB.email);
    const changePassword = (from: string, to: string) =>
      fetch(`${t.a.url}/1/users/${user?.id}/password`, {
        method: 'PUT',
        headers: { authorization: basic(BOB.email, from), 'content-type': 'application/json' },
        body: JSON.stringify({ password: to }),
      });
    await withBrowser(async (page, context) => {
      await openApp(page, t.a);
      await signInWithPassword(page, BOB, 'globex');
      expect(await shown(page, 'x-user-email')).toBe(BOB.email);
      const value = (await sessionCookie(context)) as string;
      expect((await withCookie(t.b, value)).status).toBe(200);
      expect((await changePassword(BOB.password, `${BOB.password}-new`)).status).toBe(204);
      expect((await withCookie(t.b, value)).status).toBe(401);
      await openApp(page, t.b);
      expect(new URL(page.url()).pathname).toBe('/1/sign-in');
      expect((await changePassword(`${BOB.password}-new`, BOB.password)).status).toBe(204);
    });
  });

  it.each([
    ['acme', 'ann@acme.test', 'ann'],
    ['globex', 'gus@globex.test', 'gus'],
  ] as const)(
    "signs in with %s's IdP and lands on return_to as that tenant's member",
    async (tenant, email, account) => {
      await withBrowser(async (page) => {
        await openApp(page, t.b);
        await signInWithCompany(page, email, account);
        expect(await shown(page, 'x-user-email')).toBe(email);
        expect(await shown(page, 'x-tenant-id')).toBe(tenant);
      });
    },
  );

  it("a logout at the IdP (its back-channel token to one instance) ends the IdP's session on the other", async () => {
    await withBrowser(async (page, context) => {
      await openApp(page, t.b);
      await signInWithCompany(page, 'ann@acme.test', 'ann');
      const value = (await sessionCookie(context)) as string;
      expect((await withCookie(t.b, value)).status).toBe(200);
      const idp: TestIdp = idps.acme;
      const idpCookies = (await context.cookies(idp.issuer))
        .map((cookie) => `${cookie.name}=${cookie.value}`)
        .join('; ');
      // oidc-provider posts its logout token to instance a before it answers.
      await idp.endSession(idpCookies);
      expect((await withCookie(t.b, value)).status).toBe(401);
      expect((await withCookie(t.a, value)).status).toBe(401);
    });
  });
});
