/**
 * TOTP for tests (issue 45): a sealing key file, a clock the test moves
 * (`GatewayOptions.clock`), codes computed as an authenticator app computes
 * them (otplib), and a user's enrolment through the API.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'otplib';
import { expect } from 'vitest';
import { USER_STREAM } from '../../src/store/audit-log.js';
import type { Store } from '../../src/store/types.js';
import { basic } from './gateway.js';

/** A file of 32 random bytes, base64: `mfa.totp.secretsKeyFile`. */
export function totpKeyFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tg-totp-key-')), 'totp.key');
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`);
  return file;
}

/** The `mfa` section with TOTP on, sealed under a new key file. */
export function totpConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { totp: { enabled: true, secretsKeyFile: totpKeyFile() }, ...extra };
}

/** A clock the test moves: the system's plus `offsetMs`. */
export interface TestClock {
  now: () => number;
  /** Moves the clock on (or back) by `seconds`. */
  move(seconds: number): void;
}

export function testClock(): TestClock {
  let offsetMs = 0;
  return {
    now: () => Date.now() + offsetMs,
    move(seconds) {
      offsetMs += seconds * 1000;
    },
  };
}

/** The 6-digit code an app shows for `secret` at `atMs` (default: now). */
export function codeAt(secret: string, atMs: number = Date.now()): Promise<string> {
  return generate({ secret, epoch: Math.floor(atMs / 1000) });
}

/** What an enrolment gave the user. */
export interface Enrolled {
  secret: string;
  recoveryCodes: string[];
}

/**
 * Enrols `who` through the API (Basic): the secret, then a code of it
 * confirms it. `clock` is the gateway's, when the test moves it.
 */
export async function enrolTotp(
  url: string,
  who: { email: string; password: string },
  clock: TestClock | undefined = undefined,
): Promise<Enrolled> {
  const authorization = basic(who.email, who.password);
  const begun = await fetch(`${url}/1/users/current/mfa/totp`, {
    method: 'POST',
    headers: { authorization },
  });
  expect(begun.status).toBe(201);
  const { secret } = (await begun.json()) as { secret: string };
  const confirmed = await fetch(`${url}/1/users/current/mfa/totp/confirm`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ code: await codeAt(secret, clock?.now()) }),
  });
  expect(confirmed.status).toBe(200);
  const { recovery_codes: recoveryCodes } = (await confirmed.json()) as {
    recovery_codes: string[];
  };
  return { secret, recoveryCodes };
}

/** The user-level audit events of `kind` in `store` (the `users` stream), oldest first. */
export async function userEvents(store: Store, kind: string): Promise<Record<string, unknown>[]> {
  const entries = await store.auditLog({ maxEventsPerStream: 10_000 }).read(USER_STREAM, 0);
  return entries
    .map((entry) => JSON.parse(entry.event) as Record<string, unknown>)
    .filter((event) => event.event === kind);
}
