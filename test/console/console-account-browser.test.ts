/**
 * Issue 46, the console's account page in a real headless Chromium, as a
 * person does it: turns on an authenticator app — the key typed into an
 * app (otplib computes its code), the recovery codes shown once — after
 * which a password login (Basic) without `X-OTP` is 401 `mfa_required` and
 * one with a code works; removes it with a code after confirming. Adds a
 * passkey with Chromium's virtual authenticator (CDP WebAuthn), sees it
 * listed, removes it after confirming. axe-core finds no serious or critical
 * violation in each state; screenshots at 390 and 1280 px under
 * `test-results/console/`. A wrong current password or code is said on the
 * page (no Basic challenge opens the browser's own dialog). The gateway runs
 * at `http://localhost:<port>` (`publicUrl`): a secure context for WebAuthn,
 * `localhost` the rpId; its clock is the test's, so that each code is of a
 * step not used before.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addVirtualAuthenticator, startBrowser } from '../support/browser.js';
import { consoleCall } from '../support/console-session.js';
import { basic } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import {
  screenshotForDocs,
  screenshotsAtBothWidths,
  seriousViolations,
} from '../support/page-checks.js';
import { SESSIONS } from '../support/sign-in-page.js';
import { startOnFreePort } from '../support/start-on-free-port.js';
import { codeAt, testClock, totpConfig, type TestClock } from '../support/totp.js';

let fx: IdentityFixture;
let clock: TestClock;
let browser: Browser;
let base: string;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  clock = testClock();
  fx = await startOnFreePort('console-account', (_dir, port) =>
    startMemoryIdentityFixture(
      {
        sessions: SESSIONS,
        console: { enabled: true },
        publicUrl: `http://localhost:${port}`,
        mfa: totpConfig({ passkeys: { enabled: true } }),
      },
      { port, clock: clock.now },
    ),
  );
  base = fx.config.publicUrl as string;
  browser = await startBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(8000);
  await addVirtualAuthenticator(context, page);
  await page.goto(`${base}/1/sign-in?return_to=%2Fconsole%2Faccount&tenant_id=acme`);
  await page.getByLabel('E-mail').fill(ALICE.email);
  await page.getByLabel('Password').fill(ALICE.password);
  await Promise.all([page.waitForURL(`${base}/console/account`), page.keyboard.press('Enter')]);
}, 60_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await fx?.close();
});

/** The account page settled (nothing loading): no serious axe violation, photographed, no wider than a phone. */
async function checkState(name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  await expect.poll(() => page.getByText(/^Loading/).count()).toBe(0);
  expect(await seriousViolations(page), name).toEqual([]);
  await screenshotsAtBothWidths(page, 'console', name);
  // A phone's width: nothing wider than the screen (a wide table scrolls in its own box).
  await page.setViewportSize({ width: 390, height: 900 });
  expect(await page.evaluate('document.documentElement.scrollWidth'), name).toBe(390);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** A Basic login (`GET /1/token`) of Alice, with `X-OTP` when a code is given: its status and error. */
async function passwordLogin(code?: string): Promise<{ status: number; error?: string }> {
  const res = await fetch(`${base}/1/token?tenant_id=acme`, {
    headers: {
      authorization: basic(ALICE.email, ALICE.password),
      ...(code === undefined ? {} : { 'x-otp': code }),
    },
  });
  const body = (await res.json()) as { error?: string };
  return { status: res.status, ...(body.error === undefined ? {} : { error: body.error }) };
}

/** The next 30-second step's code for `secret` (a step is accepted once). */
async function nextCode(secret: string): Promise<string> {
  clock.move(30);
  return codeAt(secret, clock.now());
}

/** `second_factors` of `GET /1/users/current`, as the page's own script reads it. */
const factorsSeenByThePage = () =>
  page.evaluate("fetch('/1/users/current').then((r) => r.json()).then((me) => me.second_factors)");

let secret: string;

describe('the authenticator app on the account page', () => {
  it('is off at first; the page says so and offers to set it up', async () => {
    await page.getByRole('heading', { name: 'Authenticator app' }).waitFor();
    await page
      .getByText(/^Off\./)
      .first()
      .waitFor();
    await page.getByText('No passkeys.').waitFor();
    await checkState('account-factors-off');
  });

  it('is set up with the shown key and a code of it; the ten recovery codes are shown once', async () => {
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const key = page.locator('[data-totp-key]');
    await key.waitFor();
    const shown = (await key.textContent()) as string;
    expect(shown).toMatch(/^[A-Z2-7]{4}( [A-Z2-7]{1,4})+$/);
    secret = shown.replace(/ /g, '');
    const link = page.getByRole('link', { name: /^otpauth:\/\/totp\// });
    expect(await link.getAttribute('href')).toContain(`secret=${secret}`);
    await checkState('account-totp-key');
    await screenshotForDocs(page, 'console', 'console-account-totp-key-390', {
      width: 390,
      part: page.locator('section', {
        has: page.getByRole('heading', { name: 'Authenticator app' }),
      }),
    });

    await page.getByLabel('The code your app shows now').fill(await codeAt(secret, clock.now()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('region', { name: 'Your recovery codes' });
    await codes.waitFor();
    const recovery = ((await codes.locator('[data-secret]').textContent()) as string).split('\n');
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    await page.getByText(/^On\./).first().waitFor();
    await checkState('account-totp-codes');
    await screenshotForDocs(page, 'console', 'console-account-totp', {
      part: page.locator('section', {
        has: page.getByRole('heading', { name: 'Authenticator app' }),
      }),
    });

    expect(await passwordLogin()).toEqual({ status: 401, error: 'mfa_required' });
    expect(await passwordLogin(await nextCode(secret))).toEqual({ status: 200 });
    await page.reload();
    await page.getByText(/^On\. .* 10 recovery codes left\./).waitFor();
    expect(await page.locator('[data-secret]').count()).toBe(0);
    expect(await factorsSeenByThePage()).toEqual({
      totp: { enrolled: true, recovery_codes_left: 10 },
      passkeys: { count: 0 },
    });
  });

  it('is removed with a current code after confirming; a wrong code is said as a sentence', async () => {
    await page.getByLabel('A current code from your app, or a recovery code').fill('000000');
    await page.getByRole('button', { name: 'Remove authenticator app' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove your authenticator app?' });
    await dialog.getByRole('button', { name: 'Remove authenticator app' }).click();
    await page
      .getByRole('alert')
      .getByText('Enter a current code from your authenticator app (or a recovery code).')
      .waitFor();
    await page.getByText(/^On\./).first().waitFor();
    // The refusal names no Basic challenge: the browser would open its password dialog over the page.
    const session = (await context.cookies()).find((c) => c.name === 'tg_session');
    const refused = await consoleCall(
      base,
      `tg_session=${session?.value}`,
      'DELETE',
      '/1/users/current/mfa/totp',
      undefined,
      { 'x-otp': '000000' },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBeNull();

    const code = await nextCode(secret);
    await page.getByLabel('A current code from your app, or a recovery code').fill(code);
    await page.getByRole('button', { name: 'Remove authenticator app' }).click();
    await dialog.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Remove authenticator app' }).click();
    await page.getByText(/^Your authenticator app is removed/).waitFor();
    await page
      .getByText(/^Off\./)
      .first()
      .waitFor();
    expect(await passwordLogin()).toEqual({ status: 200 });
  });
});

describe('passkeys on the account page', () => {
  it("adds one through the browser's authenticator, lists it, removes it after confirming", async () => {
    await page.getByLabel('A name to tell it by (optional)').fill('This laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page
      .getByText('The passkey “This laptop” is added: use it on the sign-in page.')
      .waitFor();
    const item = page.locator('ul.passkeys li', { hasText: 'This laptop' });
    await item.getByText(/last used never/).waitFor();
    await checkState('account-passkey');
    await screenshotForDocs(page, 'console', 'console-account-passkeys', {
      part: page.locator('section', { has: page.getByRole('heading', { name: 'Passkeys' }) }),
    });

    const listed = await fetch(`${base}/1/users/current`, {
      headers: { authorization: `Bearer ${(await tokenFor(base, ALICE, 'acme')).access_token}` },
    });
    expect(((await listed.json()) as { second_factors: unknown }).second_factors).toEqual({
      totp: { enrolled: false, recovery_codes_left: null },
      passkeys: { count: 1 },
    });

    await page.getByRole('button', { name: 'Remove passkey This laptop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove the passkey “This laptop”?' });
    await dialog.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Remove passkey' }).click();
    await page.getByText('The passkey “This laptop” is removed.').waitFor();
    await page.getByText('No passkeys.').waitFor();
  });
});

describe('the password on the account page', () => {
  it("a wrong current password is said as a sentence, not met by the browser's password dialog", async () => {
    await page.getByLabel('Current password').fill('not-the-password');
    await page.getByLabel('New password (8 to 72 bytes)').fill('another-password-9');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').getByText('The password is not right.').waitFor();
    expect(await passwordLogin()).toEqual({ status: 200 });
  });
});
