/**
 * `mfa.requiredForAdmins` (issue 45; docs/accounts.md "Requiring a second
 * factor of admins"): a tenant's admin without a second factor is refused
 * what needs the admin role (403 `forbidden`, the description telling them
 * to enrol) until they enrol one; a pending enrolment is no factor; a
 * member is refused as before (the role, not the factor); without the
 * setting, nothing changes. Config: the setting with no factor to enrol is
 * refused at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/index.js';
import { adminCall } from '../../support/admin-call.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import { basic } from '../../support/gateway.js';
import { codeAt, enrolTotp, totpConfig } from '../../support/totp.js';
import { newPasskey } from '../../store/store-fixtures.js';

let fx: IdentityFixture;
let relaxed: IdentityFixture;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture({ mfa: totpConfig({ requiredForAdmins: true }) });
  relaxed = await startMemoryIdentityFixture({ mfa: totpConfig() });
}, 60_000);
afterAll(async () => {
  await fx?.close();
  await relaxed?.close();
});

async function aliceToken(url: string, otp?: string): Promise<string> {
  const res = await fetch(`${url}/1/token?tenant_id=acme`, {
    headers: {
      authorization: basic(ALICE.email, ALICE.password),
      ...(otp === undefined ? {} : { 'x-otp': otp }),
    },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('mfa.requiredForAdmins', () => {
  it('refuses an admin without a second factor (pending is none), admits them once enrolled', async () => {
    const before = await adminCall(
      fx.gw.url,
      'GET',
      '/1/tenants/acme/clients',
      await aliceToken(fx.gw.url),
    );
    expect(before.status).toBe(403);
    const body = before.body as { error: string; error_description: string };
    expect(body.error).toBe('forbidden');
    expect(body.error_description).toMatch(/second factor.*enrol/i);
    // A pending enrolment is no factor yet.
    const begun = await fetch(`${fx.gw.url}/1/users/current/mfa/totp`, {
      method: 'POST',
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect(begun.status).toBe(201);
    const pending = await adminCall(
      fx.gw.url,
      'GET',
      '/1/tenants/acme/idp',
      await aliceToken(fx.gw.url),
    );
    expect(pending.status).toBe(403);
    const { secret } = await enrolTotp(fx.gw.url, ALICE);
    const token = await aliceToken(fx.gw.url, await codeAt(secret, Date.now() + 30_000));
    expect((await adminCall(fx.gw.url, 'GET', '/1/tenants/acme/clients', token)).status).toBe(200);
    expect((await adminCall(fx.gw.url, 'GET', '/1/tenants/acme/domains', token)).status).toBe(200);
  });

  it('a passkey counts as the second factor (it signs in as both)', async () => {
    const bobLogin = { email: 'bob@example.com', password: 'bob-password-1' };
    const token = (await tokenFor(fx.gw.url, bobLogin, 'globex')).access_token;
    const clients = '/1/tenants/globex/clients';
    expect((await adminCall(fx.gw.url, 'GET', clients, token)).status).toBe(403);
    const store = fx.gw.gateway.store;
    const bob = await store.users.findUserByEmail(bobLogin.email);
    await store.passkeys.addPasskey(newPasskey(bob?.id as string));
    expect((await adminCall(fx.gw.url, 'GET', clients, token)).status).toBe(200);
  });

  it('a member is refused for the role, as without the setting', async () => {
    const bob = (
      await tokenFor(fx.gw.url, { email: 'bob@example.com', password: 'bob-password-1' }, 'acme')
    ).access_token;
    const res = await adminCall(fx.gw.url, 'GET', '/1/tenants/acme/clients', bob);
    expect(res.status).toBe(403);
    expect((res.body as { error_description: string }).error_description).not.toMatch(
      /second factor/,
    );
  });

  it('without the setting an admin acts with a password alone', async () => {
    const res = await adminCall(
      relaxed.gw.url,
      'GET',
      '/1/tenants/acme/clients',
      await aliceToken(relaxed.gw.url),
    );
    expect(res.status).toBe(200);
  });

  it('is a config error with no second factor to enrol', () => {
    expect(() =>
      validateConfig({ mfa: { requiredForAdmins: true } }, process.cwd(), 'test'),
    ).toThrow(/mfa\.requiredForAdmins: needs mfa\.totp\.enabled or mfa\.passkeys\.enabled/);
    expect(() =>
      validateConfig({ mfa: { totp: { enabled: true } } }, process.cwd(), 'test'),
    ).toThrow(/mfa\.totp\.secretsKeyFile: needed with mfa\.totp\.enabled/);
  });
});
