/**
 * The sign-in page in a real headless Chromium: a person types an e-mail
 * and a password, presses Enter and lands on `return_to` with the session
 * cookie, which no script can read; the same by keyboard alone; axe-core
 * finds no serious or critical violation on the page, its error state and
 * the tenant choice; another site's form is refused; the app's sign-out
 * button ends it. Screenshots at 390 and 1280 px go to `test-results/`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startBrowser,
  startPageOrigin,
  withBrowserPage,
  type PageOrigin,
} from '../../support/browser.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { seriousViolations } from '../../support/page-checks.js';
import { SESSIONS } from '../../support/sign-in-page.js';
import { codeAt, enrolTotp, totpConfig } from '../../support/totp.js';
import { startUpstream, type Upstream } from '../../support/upstream.js';

const DAVE = { email: 'dave@example.com', password: 'dave-password-1' };
const SHOTS = join(import.meta.dirname, '../../../test-results/sign-in');

/** The app behind the gateway: a page with the sign-out form an app renders. */
const APP_PAGE = `<!doctype html><html lang="en"><head><title>App</title></head><body><main>
<h1>App</h1>
<form method="post" action="/1/sign-out"><input type="hidden" name="return_to" value="/app/bye"><button type="submit">Sign out</button></form>
</main></body></html>`;

let fx: IdentityFixture;
let app: Upstream;
let attacker: PageOrigin;
let browser: Browser;
let base: string;

beforeAll(async () => {
  app = await startUpstream((req, res) => {
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/html' }).end(APP_PAGE));
  });
  fx = await startMemoryIdentityFixture({
    sessions: SESSIONS,
    routes: [{ prefix: '/app', upstream: app.url, auth: 'none' }],
    mfa: totpConfig(),
  });
  base = fx.gw.url;
  const signup = await fetch(`${base}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(DAVE),
  });
  expect(signup.status).toBe(201);
  attacker = await startPageOrigin();
  browser = await startBrowser();
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await attacker?.close();
  await fx?.close();
  await app?.close();
});

const withPage = <T>(
  run: (page: Page, context: BrowserContext) => Promise<T>,
  options: { width?: number } = {},
): Promise<T> => withBrowserPage(browser, run, options);

describe('a person signs in', () => {
  it('types e-mail and password, presses Enter, lands on return_to with an HttpOnly cookie', async () => {
    await withPage(async (page, context) => {
      await page.goto(`${base}/1/sign-in?return_to=%2Fapp%2Fhome`);
      expect(await page.title()).toBe('Sign in');
      await page.getByLabel('E-mail').fill(DAVE.email);
      await page.getByLabel('Password').fill(DAVE.password);
      await Promise.all([page.waitForURL(`${base}/app/home`), page.keyboard.press('Enter')]);
      const session = (await context.cookies()).find((c) => c.name === 'tg_session');
      expect(session?.httpOnly).toBe(true);
      expect(session?.sameSite).toBe('Lax');
      expect(session?.value).toMatch(/^ses_/);
      expect(await page.evaluate('document.cookie')).not.toContain('tg_session');
      expect((await context.cookies()).some((c) => c.name === 'tg_signin')).toBe(false);

      // The app's sign-out form ends it: back where it said, the cookie gone.
      await Promise.all([
        page.waitForURL(`${base}/app/bye`),
        page.getByRole('button', { name: 'Sign out' }).click(),
      ]);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(false);
    });
  });

  it('does it by keyboard alone, with the focus visible', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/1/sign-in?return_to=%2Fapp%2Fkeys`);
      // The e-mail field has the focus when the page opens.
      expect(await page.evaluate('document.activeElement?.id')).toBe('email');
      await page.keyboard.type(DAVE.email);
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement?.id')).toBe('password');
      await page.keyboard.type(DAVE.password);
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(`(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return { text: el.textContent, outline: style.outlineStyle, width: style.outlineWidth };
      })()`);
      expect(focused).toEqual({ text: 'Sign in', outline: 'solid', width: '3px' });
      await Promise.all([page.waitForURL(`${base}/app/keys`), page.keyboard.press('Enter')]);
    });
  });

  it('is refused a form another site posts (login CSRF)', async () => {
    await withPage(async (page, context) => {
      await page.goto(`${attacker.origin}/`);
      await page.setContent(`<form method="post" action="${base}/1/sign-in">
<input name="email" value="${DAVE.email}"><input name="password" value="${DAVE.password}">
<input name="csrf_token" value="forged"></form>`);
      const [answer] = await Promise.all([
        page.waitForResponse(`${base}/1/sign-in`),
        page.evaluate('document.querySelector("form").submit()'),
      ]);
      expect(answer.status()).toBe(403);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(false);
    });
  });
});

describe('accessibility', () => {
  it('axe-core finds no serious violation on the page, its error state and the tenant choice', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/1/sign-in?return_to=%2Fapp`);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel('E-mail').fill(ALICE.email);
      await page.getByLabel('Password').fill('not-her-password');
      await Promise.all([page.waitForLoadState(), page.keyboard.press('Enter')]);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toBe('E-mail or password is wrong.');
      // The alert has the focus, and the fields name it.
      expect(await page.evaluate('document.activeElement?.id')).toBe('sign-in-alert');
      expect(await page.getByLabel('E-mail').getAttribute('aria-describedby')).toBe(
        'sign-in-alert',
      );
      expect(await page.getByLabel('E-mail').inputValue()).toBe(ALICE.email);
      expect(await page.getByLabel('Password').inputValue()).toBe('');
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel('Password').fill(ALICE.password);
      await Promise.all([page.waitForLoadState(), page.keyboard.press('Enter')]);
      await page.getByRole('radio', { name: 'Acme' }).waitFor();
      expect(await page.title()).toBe('Choose an organisation');
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByRole('radio', { name: 'Acme' }).check();
      await Promise.all([
        page.waitForURL(`${base}/app`),
        page.getByRole('button', { name: 'Continue' }).click(),
      ]);
    });
  });

  it('is readable at 390 and 1280 px wide (screenshots in test-results/sign-in)', async () => {
    for (const width of [390, 1280]) {
      await withPage(
        async (page) => {
          await page.goto(`${base}/1/sign-in?return_to=%2Fapp`);
          // Nothing wider than the screen: no sideways scrolling on a phone.
          expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
            width,
          );
          await page.screenshot({ path: join(SHOTS, `sign-in-${width}.png`), fullPage: true });
        },
        { width },
      );
    }
  });
});

describe('a person with an authenticator app signs in (issue 45)', () => {
  it('enrolled through the API: password, then the code otplib computes, lands on return_to; a recovery code works once', async () => {
    const erin = { email: 'erin@example.com', password: 'erin-password-1' };
    const signup = await fetch(`${base}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(erin),
    });
    expect(signup.status).toBe(201);
    const { secret, recoveryCodes } = await enrolTotp(base, erin);
    const passwordThenCode = async (page: Page) => {
      await page.goto(`${base}/1/sign-in?return_to=%2Fapp%2Fhome`);
      await page.getByLabel('E-mail').fill(erin.email);
      await page.getByLabel('Password').fill(erin.password);
      await Promise.all([page.waitForLoadState(), page.keyboard.press('Enter')]);
      await page.getByLabel('Code', { exact: true }).waitFor();
      expect(await page.title()).toBe('Enter your code');
    };
    await withPage(async (page, context) => {
      await passwordThenCode(page);
      expect(await seriousViolations(page)).toEqual([]);
      // The confirming code's step is used: the next one, as a phone a little ahead shows it.
      await page
        .getByLabel('Code', { exact: true })
        .fill(await codeAt(secret, Date.now() + 30_000));
      await Promise.all([page.waitForURL(`${base}/app/home`), page.keyboard.press('Enter')]);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(true);
    });
    for (const expected of ['signed in', 'refused']) {
      await withPage(async (page) => {
        await passwordThenCode(page);
        // By keyboard: the link to the recovery form, then its field.
        await page.getByRole('link', { name: 'Use a recovery code' }).click();
        await page.getByLabel('Recovery code').fill(recoveryCodes[0] as string);
        await Promise.all([
          page.waitForLoadState(),
          page.getByLabel('Recovery code').press('Enter'),
        ]);
        if (expected === 'signed in') {
          await page.waitForURL(`${base}/app/home`);
        } else {
          await page.getByRole('alert').waitFor();
          expect(await page.getByRole('alert').textContent()).toContain('wrong, expired or used');
          expect(await seriousViolations(page)).toEqual([]);
        }
      });
    }
  });
});
