/**
 * Issue 45's operator commands as the operator runs them: `user add
 * --verified` (the operator's word that the address is the person's, so a
 * password signs in under `signup.verifyEmail` without a mailed link) and
 * `user mfa reset EMAIL` (the way back for a person who lost the
 * authenticator and the recovery codes), against a running gateway (`serve`)
 * on the harness's Redis, with TOTP on. `user show` tells the operator both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { startMailInbox, type MailInbox } from '../support/mail-inbox.js';
import { enrolTotp, totpKeyFile } from '../support/totp.js';
import {
  type Case,
  type CliHarness,
  type Served,
  releaseCliHarness,
  sharedCliHarness,
} from './harness.js';

const TIMEOUT = 30_000;
const VERA = { email: 'vera@example.com', password: 'vera-password-1', tenant: '' };
const UNO = { email: 'uno@example.com', password: 'uno-password-1', tenant: '' };

interface Shown {
  user_email: string;
  email_verified_at: number | null;
  factors: { type: string; recovery_codes_left?: number }[];
}

let h: CliHarness;
let kase: Case;
let inbox: MailInbox;
let gateway: Served | undefined;

beforeAll(async () => {
  h = await sharedCliHarness();
  inbox = await startMailInbox();
  kase = h.newCase(
    [
      'publicUrl: http://gw.example.test',
      `mail: { smtp: "${inbox.smtpUrl}", from: gw@example.test, attempts: 1 }`,
      'signup: { verifyEmail: true }',
      `mfa: { totp: { enabled: true, secretsKeyFile: ${totpKeyFile()} } }`,
    ].join('\n'),
  );
  await h.ok(['keys', 'add', ...kase.c]);
  const env = { VERA_PASSWORD: VERA.password, UNO_PASSWORD: UNO.password };
  // Each user's personal tenant, which their logins name.
  VERA.tenant = (
    await h.ok<{ tenant_id: string }>(
      ['user', 'add', VERA.email, '--verified', '--password-env', 'VERA_PASSWORD', ...kase.c],
      { env },
    )
  ).tenant_id;
  UNO.tenant = (
    await h.ok<{ tenant_id: string }>(
      ['user', 'add', UNO.email, '--password-env', 'UNO_PASSWORD', ...kase.c],
      { env },
    )
  ).tenant_id;
  gateway = await h.serve(kase);
}, TIMEOUT);

afterAll(async () => {
  if (gateway !== undefined) expect(await gateway.stop()).toBe(0);
  await inbox?.close();
  if (h !== undefined) await releaseCliHarness();
});

const show = (email: string) => h.ok<Shown>(['user', 'show', email, ...kase.c]);
const login = (who: typeof VERA, otp?: string) =>
  fetch(`${gateway!.base}/1/token?tenant_id=${who.tenant}`, {
    headers: { authorization: basic(who.email, who.password), ...(otp ? { 'x-otp': otp } : {}) },
  });

describe('user add --verified', () => {
  it(
    'a verified user signs in with the password alone; one added without it is asked to verify',
    async () => {
      expect((await login(VERA)).status).toBe(200);
      await expectError(await login(UNO), 403, 'email_not_verified');
      expect((await show(VERA.email)).email_verified_at).toEqual(expect.any(Number));
      expect((await show(UNO.email)).email_verified_at).toBeNull();
    },
    TIMEOUT,
  );
});

describe('user mfa reset', () => {
  it(
    'removes an enrolled TOTP, so the password alone signs in again; audited; a second reset removes nothing',
    async () => {
      const { recoveryCodes } = await enrolTotp(gateway!.base, VERA);
      await expectError(await login(VERA), 401, 'mfa_required');
      expect((await show(VERA.email)).factors).toContainEqual(
        expect.objectContaining({ type: 'totp', recovery_codes_left: 10 }),
      );

      // The binary, as the operator runs it: its argv, its output, its exit code.
      const reset = await h.bin.ok<Record<string, unknown>>([
        'user',
        'mfa',
        'reset',
        VERA.email,
        ...kase.c,
      ]);
      expect(reset).toMatchObject({ user_email: VERA.email, totp_removed: true });
      expect(JSON.stringify(reset)).not.toContain(recoveryCodes[0]);

      expect((await login(VERA)).status).toBe(200);
      expect((await show(VERA.email)).factors.map((f) => f.type)).toEqual(['password']);
      const tail = await h.cli(['audit', 'tail', ...kase.c]);
      const removed = tail.stdout
        .split('\n')
        .filter((line) => line.includes('"mfa_removed"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(removed).toEqual([
        expect.objectContaining({ user_email: VERA.email, reason: 'reset' }),
      ]);
      // A recovery code of the removed factor is no second factor any more: nothing asks for one.
      expect((await login(VERA, recoveryCodes[0])).status).toBe(200);
      expect(await h.ok(['user', 'mfa', 'reset', VERA.email, ...kase.c])).toMatchObject({
        totp_removed: false,
      });
    },
    TIMEOUT,
  );

  it('an unknown address fails with exit 1 and says so', async () => {
    expect(await h.fails(['user', 'mfa', 'reset', 'nobody@example.com', ...kase.c])).toMatch(
      /nobody@example\.com/,
    );
  });
});
