/**
 * Issue 45's pages in a real headless Chromium, the mails read from a real
 * SMTP inbox: a person signs up, follows the mailed link, presses the
 * button, and signs in on the sign-in page; then forgets the password, asks
 * for a link on the page the sign-in page links to, follows the mail, sets
 * a new password and signs in with it, the old one refused. axe-core finds
 * no serious or critical violation on any of the pages.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followLink, mailedConfig } from '../../support/account-mail.js';
import { signUp } from '../../support/account-requests.js';
import { startBrowser, withBrowserPage } from '../../support/browser.js';
import {
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { startMailInbox, type MailInbox } from '../../support/mail-inbox.js';
import { seriousViolations } from '../../support/page-checks.js';
import { SESSIONS } from '../../support/sign-in-page.js';

const ERIN = { email: 'erin@example.net', password: 'erin-password-1' };
const NEW_PASSWORD = 'erin-new-password-2';

let inbox: MailInbox;
let fx: IdentityFixture;
let browser: Browser;
let base: string;

beforeAll(async () => {
  inbox = await startMailInbox();
  fx = await startMemoryIdentityFixture({ ...mailedConfig(inbox), sessions: SESSIONS });
  base = fx.gw.url;
  browser = await startBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fx?.close();
  await inbox?.close();
});

/** axe-core's verdict on the page as shown (its script let in past the page's CSP for the check). */
async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

/** The sign-in page: e-mail and password typed, Enter pressed. */
async function signIn(page: Page, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(ERIN.email);
  await page.getByLabel('Password').fill(password);
  await page.keyboard.press('Enter');
  await page.waitForLoadState();
}

describe('a person', () => {
  it('signs up, follows the mailed link, presses the button and signs in', async () => {
    expect((await signUp(base, ERIN)).status).toBe(201);
    const link = followLink(await inbox.next(ERIN.email), '/1/email-verifications', base);
    await withBrowserPage(browser, async (page, context) => {
      // Before the address is confirmed, the right password is told so.
      await page.goto(`${base}/1/sign-in`);
      await signIn(page, ERIN.password);
      expect(await page.getByRole('alert').textContent()).toContain('not verified yet');
      await inbox.next(ERIN.email);

      await page.goto(link);
      expect(await page.title()).toBe('Confirm your e-mail address');
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Confirm my address' }).click();
      await page.waitForLoadState();
      expect(await page.title()).toBe('Your e-mail address is confirmed');
      await expectAccessible(page);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/1/sign-in`);
      await Promise.all([page.waitForURL(`${base}/`), signIn(page, ERIN.password)]);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(true);
    });
  }, 60_000);

  it('forgets the password: the reset page, the mail, a new password, then signs in with it', async () => {
    await withBrowserPage(browser, async (page, context) => {
      await page.goto(`${base}/1/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.waitForURL(`${base}/1/password-resets`);
      expect(await page.title()).toBe('Reset your password');
      await expectAccessible(page);
      await page.getByLabel('E-mail').fill(ERIN.email);
      await page.getByRole('button', { name: 'Mail me a link' }).click();
      await page.waitForLoadState();
      expect(await page.title()).toBe('Check your mail');
      await expectAccessible(page);

      const link = followLink(await inbox.next(ERIN.email), '/1/password-resets', base);
      await page.goto(link);
      expect(await page.title()).toBe('Choose a new password');
      await expectAccessible(page);
      // Too short: the form again, saying why.
      await page.getByLabel('New password').fill('short');
      await page.evaluate('document.getElementById("password").removeAttribute("minlength")');
      await page.getByRole('button', { name: 'Set my password' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('alert').textContent()).toContain('8 to 72 bytes');
      await expectAccessible(page);
      await page.getByLabel('New password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set my password' }).click();
      await page.waitForLoadState();
      expect(await page.title()).toBe('Your password is set');
      await expectAccessible(page);

      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/1/sign-in`);
      await signIn(page, ERIN.password);
      expect(await page.getByRole('alert').textContent()).toContain('E-mail or password is wrong.');
      await Promise.all([page.waitForURL(`${base}/`), signIn(page, NEW_PASSWORD)]);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(true);

      // The used link is a page saying so, with a way to ask again.
      await page.goto(link);
      expect(await page.title()).toBe('This link does not work');
      await expectAccessible(page);
    });
  }, 60_000);
});
