/**
 * An invitation in Chromium (issue 45): the invitee follows the mailed link,
 * chooses a password on the page, and lands as a member of the tenant with
 * the invited role; axe-core finds no serious or critical violation on the
 * page, on its refusal (a password too short), or on the page after.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowser } from '../../support/browser.js';
import { fixtureSuite } from '../../support/fixture-suite.js';
import { ALICE, tokenFor } from '../../support/identity-fixture.js';
import { startMailInbox, type MailInbox } from '../../support/mail-inbox.js';
import { seriousViolations } from '../../support/page-checks.js';
import { SESSIONS } from '../../support/sign-in-page.js';
import { adminCall } from '../../support/tenant-admin-calls.js';

const INVITEE = { email: 'ivan@example.test', password: 'ivan-password-1' };
let inbox: MailInbox;
let browser: Browser;
beforeAll(async () => {
  inbox = await startMailInbox();
  browser = await startBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await inbox?.close();
});
const s = fixtureSuite({}, () => ({
  sessions: SESSIONS,
  publicUrl: 'https://gw.example.test',
  mail: { smtp: inbox.smtpUrl, from: 'no-reply@example.test' },
}));

describe('the invitee in a browser', () => {
  it('follows the mailed link, sets a password, lands as a member; no serious axe violation', async () => {
    const admin = { token: (await tokenFor(s.gw.url, ALICE, 'acme')).access_token };
    const created = await adminCall(s.gw.url, admin, 'POST', '/1/tenants/acme/invitations', {
      email: INVITEE.email,
      role: 'admin',
    });
    expect(created.status).toBe(201);
    const link = new URL((await inbox.next(INVITEE.email)).links[0] as string);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${s.gw.url}${link.pathname}`);
      expect(await page.title()).toBe('Join Acme');
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel(/Choose a password/).fill('short');
      // The browser's own check (minlength) would stop it: submit past it, as a person with an old browser could.
      await page.evaluate(
        'document.querySelector("input[name=password]").removeAttribute("minlength")',
      );
      await Promise.all([page.waitForLoadState(), page.keyboard.press('Enter')]);
      await expect.poll(() => page.getByRole('alert').count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel(/Choose a password/).fill(INVITEE.password);
      await Promise.all([page.waitForLoadState(), page.getByRole('button').click()]);
      await expect.poll(() => page.title()).toBe('Welcome to Acme');
      expect(await page.getByRole('status').textContent()).toContain('as admin');
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
    const grant = await tokenFor(s.gw.url, INVITEE, 'acme');
    const role = await s.gw.gateway.store.memberships.getMemberRole(
      'acme',
      grant.user_id as string,
    );
    expect(role).toBe('admin');
  });
});
