/**
 * Issue 46, the console in a real headless Chromium, done as a tenant's admin
 * does it — clicking and typing: create a machine client and use its secret
 * with curl, add and remove an API key, verify a domain (its TXT record
 * served by a DNS server on loopback) and set the identity provider, read
 * the audit event of each; a member who is not admin is shown no admin page.
 * axe-core finds no serious or critical violation on any page; screenshots
 * at 390 and 1280 px under `test-results/console/`; a page after the first
 * visit costs at most 5 requests (the assets cached).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowser } from '../support/browser.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startMailInbox, type MailInbox } from '../support/mail-inbox.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB } from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import {
  screenshotForDocs,
  screenshotsAtBothWidths,
  seriousViolations,
} from '../support/page-checks.js';
import { SESSIONS } from '../support/sign-in-page.js';

const run = promisify(execFile);
const IDP_CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };

const PUBLIC_URL = 'https://gw.example.test';
let dns: TestDnsServer;
let inbox: MailInbox;
let ca: TestCa;
let idp: TestIdp;
let browser: Browser;
beforeAll(async () => {
  dns = await startDnsServer();
  inbox = await startMailInbox();
  ca = makeTestCa();
  idp = await startTestIdp({ ca, alg: 'ES256', clients: [IDP_CLIENT], accounts: {} });
  browser = await startBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await idp?.close();
  ca?.close();
  await dns?.stop();
  await inbox?.close();
});

const s = fixtureSuite(
  {},
  () => ({
    sessions: SESSIONS,
    console: { enabled: true },
    publicUrl: PUBLIC_URL,
    mail: { smtp: inbox.smtpUrl, from: 'Gateway <no-reply@example.test>' },
    sso: {
      enabled: true,
      ca: ca.caFile,
      redirectUris: ['https://app.example.test/signed-in'],
      allowPrivateIssuers: true,
      dnsServers: [dns.address],
    },
    authorization: { roles: { admin: ['orders:read', 'orders:write'], member: ['orders:read'] } },
  }),
  { logged: true },
);

/** A new browser (its own cookies and cache) signed in on the sign-in page as `who`, for `tenantId`. */
async function signedIn(
  who: { email: string; password: string },
  path: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${s.gw.url}${path}`);
  await page.locator('#email').fill(who.email);
  await page.locator('#password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${s.gw.url}${path}`);
  return { context, page };
}

/** The page is drawn (its heading), passes axe-core, and is photographed at both widths. */
async function checkPage(page: Page, heading: string | RegExp, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page
    .getByText(/^Loading/)
    .first()
    .waitFor({ state: 'detached' })
    .catch(() => undefined);
  expect(await seriousViolations(page), name).toEqual([]);
  await screenshotsAtBothWidths(page, 'console', name);
}

let admin: { context: BrowserContext; page: Page };
beforeAll(async () => {
  admin = await signedIn(ALICE, '/console/tenants/acme/clients');
}, 60_000);
afterAll(() => admin?.context.close());

describe("a tenant's admin in the console", () => {
  it('creates a machine client; its secret, shown once, gets a token with curl', async () => {
    const { page } = admin;
    await checkPage(page, 'Machine clients of Acme', 'clients-empty');
    await page.getByLabel('Name').fill('nightly-report');
    await page.getByLabel('orders:read').check();
    await page.getByRole('button', { name: 'Create client' }).click();
    const secret = page.locator('[data-secret]');
    await secret.waitFor();
    const value = (await secret.textContent()) as string;
    const clientId = (await page.locator('article code').first().textContent()) as string;
    expect(clientId).toMatch(/^[\w-]+$/);
    await checkPage(page, 'Machine clients of Acme', 'clients-secret');

    const { stdout } = await run('curl', [
      '-sS',
      '-u',
      `${clientId}:${value}`,
      '-d',
      'grant_type=client_credentials',
      `${s.gw.url}/1/oauth/token`,
    ]);
    const token = JSON.parse(stdout) as {
      access_token?: string;
      scope?: string;
      tenant_id?: string;
    };
    expect(token).toMatchObject({ scope: 'orders:read', tenant_id: 'acme' });
    expect(token.access_token).toMatch(/^ey/);

    // Shown once: a reload has it no more.
    await page.reload();
    await page.getByRole('heading', { name: 'nightly-report' }).waitFor();
    expect(await page.locator('[data-secret]').count()).toBe(0);
  });

  it('adds an API key (shown once) and removes it after confirming', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Add API key to nightly-report' }).click();
    const key = page.locator('[data-secret]');
    await key.waitFor();
    expect(await key.textContent()).toMatch(/^tgk_/);
    const keyId = (await page.locator('.keys li code').first().textContent()) as string;
    await page.getByRole('button', { name: `Remove key ${keyId}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove the key ${keyId}?` });
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Remove key' }).click();
    await page.getByText('No API keys.').waitFor();
  });

  it('claims a domain, verifies it once its TXT record is published, and sets the IdP', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Identity provider' }).click();
    await checkPage(page, 'Identity provider of Acme', 'idp-empty');
    await page.getByLabel('Domain', { exact: true }).fill('acme.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.getByRole('article', { name: 'acme.test' });
    await card.getByText('Not verified yet').waitFor();
    const [name, value] = await card.locator('dd code').allTextContents();
    dns.setTxt(name as string, [value as string]);
    await card.getByRole('button', { name: 'Verify acme.test' }).click();
    await card.getByText(/^Verified/).waitFor();

    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client id').fill(IDP_CLIENT.clientId);
    await page.getByLabel(/E-mail domains it vouches for/).fill('acme.test');
    await page.getByRole('button', { name: 'Save identity provider' }).click();
    await page.getByText('The identity provider is set.').waitFor();
    await checkPage(page, 'Identity provider of Acme', 'idp-set');
  });

  it('reads the audit event of each, newest first, and filters by type', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Audit' }).click();
    await checkPage(page, 'Audit events of Acme', 'audit');
    await screenshotForDocs(page, 'console', 'console-audit', { height: 760 });
    const kinds = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    for (const kind of [
      'idp_set',
      'domain_verified',
      'domain_added',
      'api_key_removed',
      'api_key_created',
      'client_created',
    ])
      expect(kinds).toContain(kind);
    expect(kinds.indexOf('idp_set')).toBeLessThan(kinds.indexOf('client_created'));
    await page.getByLabel('Type').selectOption('client_created');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect
      .poll(async () => [
        ...new Set(await page.locator('tbody tr td:nth-child(2)').allTextContents()),
      ])
      .toEqual(['client_created']);
  });

  it('after the first visit, a page costs at most 5 requests (its assets cached)', async () => {
    const { page } = admin;
    const before = s.lines.length;
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Audit events of Acme' }).waitFor();
    await page
      .getByText(/^Loading/)
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    const requests = s.lines.slice(before).filter((line) => line['msg'] === 'request');
    expect(requests.map((line) => line['path'])).not.toContainEqual(
      expect.stringMatching(/^\/console\/assets\//),
    );
    expect(requests.length).toBeLessThanOrEqual(5);
  });
});

describe("a tenant's admin and the members", () => {
  it('invites a person by keyboard alone; they follow the mailed link, choose a password and are a member', async () => {
    const { page } = admin;
    await page.goto(`${s.gw.url}/console/tenants/acme/members`);
    await checkPage(page, 'Members of Acme', 'members');
    // From the top of the page, by Tab alone, to the invitation's e-mail field.
    await page.keyboard.press('Tab');
    for (let i = 0; i < 40; i++) {
      if ((await page.evaluate('document.activeElement?.id')) === 'invite-email') break;
      await page.keyboard.press('Tab');
    }
    expect(await page.evaluate('document.activeElement?.id')).toBe('invite-email');
    await page.keyboard.type('erin@example.test');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('invite-role');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText(/^Invitation mailed to erin@example\.test/).waitFor();
    await page.getByText(/^erin@example\.test as member, expires/).waitFor();

    const mail = await inbox.next('erin@example.test');
    const link = mail.links.find((l) => l.startsWith(`${PUBLIC_URL}/1/invitations/`)) as string;
    const invitee = await browser.newContext();
    try {
      const page2 = await invitee.newPage();
      await page2.goto(`${s.gw.url}${new URL(link).pathname}`);
      await page2.getByLabel(/Choose a password/).fill('erin-password-1');
      await page2.getByRole('button', { name: 'Create the account and join' }).click();
      await page2.getByText(/You are now a member of Acme as member/).waitFor();
    } finally {
      await invitee.close();
    }

    await page.reload();
    const row = page.getByRole('row', { name: /erin@example\.test/ });
    await row.waitFor();
    expect(await page.getByText('No pending invitations.').count()).toBe(1);
  });

  it("changes a member's role, and removes them after confirming", async () => {
    const { page } = admin;
    await page.getByLabel('Role of erin@example.test').selectOption('admin');
    await page.getByText('erin@example.test is now admin.').waitFor();
    await page.getByRole('button', { name: 'Remove erin@example.test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove erin@example.test?' });
    await dialog.waitFor();
    await screenshotsAtBothWidths(page, 'console', 'members-remove-confirm');
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await page.getByText('erin@example.test is no longer a member.').waitFor();
    await expect.poll(() => page.getByRole('row', { name: /erin@example\.test/ }).count()).toBe(0);

    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit events of Acme' }).waitFor();
    const kinds = page.locator('tbody tr td:nth-child(2)');
    await expect
      .poll(() => kinds.allTextContents())
      .toEqual(
        expect.arrayContaining([
          'invitation_created',
          'invitation_accepted',
          'member_role_changed',
          'member_removed',
        ]),
      );
  });
});

describe('a member who is not admin', () => {
  it('sees their account, and no admin page or link', async () => {
    const { context, page } = await signedIn(BOB, '/console/tenants/acme/clients');
    try {
      await checkPage(page, "For the tenant's admins", 'member-refused');
      expect(await page.getByRole('link', { name: 'Machine clients' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Your account' }).first().click();
      await checkPage(page, 'Your account', 'account');
      await page.getByRole('heading', { name: 'Where you are signed in' }).waitFor();
      // This gateway offers no second factor (`mfa`): the account page shows none.
      expect(await page.getByRole('heading', { name: /Authenticator app|Passkeys/ }).count()).toBe(
        0,
      );
    } finally {
      await context.close();
    }
  });
});
