/**
 * Passkeys in a real headless Chromium with its virtual authenticator (CDP
 * `WebAuthn.addVirtualAuthenticator`: CTAP2, internal, resident keys, user
 * verification): a person signs in with a password, the signed-in page
 * registers a passkey as an app's own script would (`fetch` and
 * `navigator.credentials.create`), signs out, then signs in on the sign-in
 * page with the "Sign in with a passkey" button alone — no e-mail, no
 * password — and lands on `return_to` of an `auth: session` route, whose
 * upstream sees the user. axe-core finds no serious or critical violation on
 * the page with the button. The gateway runs at `http://localhost:<port>`
 * (`publicUrl`): a secure context for WebAuthn, `localhost` the rpId.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addVirtualAuthenticator, startBrowser } from '../../support/browser.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { seriousViolations } from '../../support/page-checks.js';
import { SESSIONS } from '../../support/sign-in-page.js';
import { startOnFreePort } from '../../support/start-on-free-port.js';
import { startEchoUpstream, type Upstream } from '../../support/upstream.js';

let fx: IdentityFixture;
let echo: Upstream;
let browser: Browser;
let base: string;

beforeAll(async () => {
  echo = await startEchoUpstream();
  fx = await startOnFreePort('passkeys', (_dir, port) =>
    startMemoryIdentityFixture(
      {
        sessions: SESSIONS,
        publicUrl: `http://localhost:${port}`,
        mfa: { passkeys: { enabled: true } },
        routes: [{ prefix: '/app', upstream: echo.url, auth: 'session' }],
      },
      { port },
    ),
  );
  base = fx.config.publicUrl as string;
  browser = await startBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await fx?.close();
  await echo?.close();
});

/** What the signed-in page's own script does to register a passkey: the answer's status and body. */
const REGISTER = `(async () => {
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const headers = { 'content-type': 'application/json' };
  const asked = await fetch('/1/users/current/passkeys/options', { method: 'POST', headers });
  const options = await asked.json();
  const credential = await navigator.credentials.create({
    publicKey: {
      ...options,
      challenge: bytes(options.challenge),
      user: { ...options.user, id: bytes(options.user.id) },
      excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
    },
  });
  const res = await fetch('/1/users/current/passkeys', {
    method: 'POST',
    headers,
    body: JSON.stringify({ response: credential.toJSON(), name: 'This laptop' }),
  });
  return { status: res.status, body: await res.json() };
})()`;

describe('a passkey, registered while signed in, signs in on the sign-in page', () => {
  it('password, register, sign out, then the passkey button alone lands on return_to', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await addVirtualAuthenticator(context, page);

      await page.goto(`${base}/1/sign-in?return_to=%2Fapp%2Fhome&tenant_id=acme`);
      await page.getByLabel('E-mail').fill(ALICE.email);
      await page.getByLabel('Password').fill(ALICE.password);
      await Promise.all([page.waitForURL(`${base}/app/home`), page.keyboard.press('Enter')]);

      const registered = (await page.evaluate(REGISTER)) as {
        status: number;
        body: { passkey_id: string; name: string };
      };
      expect(registered.status).toBe(201);
      expect(registered.body.name).toBe('This laptop');

      const signedOut = await page.evaluate(
        "fetch('/1/sign-out', { method: 'POST' }).then((r) => r.ok)",
      );
      expect(signedOut).toBe(true);
      expect((await context.cookies()).some((c) => c.name === 'tg_session')).toBe(false);

      await page.goto(`${base}/1/sign-in?return_to=%2Fapp%2Fhome&tenant_id=acme`);
      const button = page.getByRole('button', { name: 'Sign in with a passkey' });
      await button.waitFor({ state: 'visible' });
      expect(await seriousViolations(page)).toEqual([]);
      await Promise.all([page.waitForURL(`${base}/app/home`), button.click()]);
      const seen = JSON.parse((await page.textContent('body')) as string) as {
        headers: Record<string, string>;
      };
      expect(seen.headers['x-user-email']).toBe(ALICE.email);
      expect(seen.headers['x-tenant-id']).toBe('acme');
      const session = (await context.cookies()).find((c) => c.name === 'tg_session');
      expect(session?.httpOnly).toBe(true);
    } finally {
      await context.close();
    }
  });
});
