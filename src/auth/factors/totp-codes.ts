/**
 * TOTP codes and recovery codes (issue 45), as authenticator apps expect
 * them (RFC 6238 with otplib: 6 digits, 30-second steps, HMAC-SHA-1, a
 * 160-bit base32 secret), and the one-use recovery codes a person keeps on
 * paper: 10 of 80 random bits each, stored only as SHA-256 digests.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import { base32 } from '../clients/secrets.js';

/** How many recovery codes a confirmation hands out. */
export const RECOVERY_CODE_COUNT = 10;

/** A code's time step may be one step before or after the clock's (RFC 6238 §5.2: clock drift). */
const TOLERANCE_SECONDS = 30;

/** A recovery code as typed: 16 base32 letters, in groups of 4 or not, any case. */
const RECOVERY_CODE = /^[a-z2-7]{16}$/;
const TOTP_CODE = /^[0-9]{6}$/;

/** A new secret, base32 (what the authenticator app is given). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The `otpauth://totp/<issuer>:<email>?secret=…&issuer=…` URI an app scans (Key URI Format). */
export function otpauthUri(issuer: string, email: string, secret: string): string {
  return generateURI({ issuer, label: email, secret });
}

/** What an `X-OTP` value is, by its form. */
export type PresentedCode =
  { kind: 'totp'; code: string } | { kind: 'recovery'; normalised: string } | { kind: 'malformed' };

/** Reads a presented code: six digits are a TOTP code, 16 base32 letters (dashes, spaces and case aside) a recovery code. */
export function readPresentedCode(value: string): PresentedCode {
  const trimmed = value.trim();
  if (TOTP_CODE.test(trimmed)) return { kind: 'totp', code: trimmed };
  const normalised = trimmed.toLowerCase().replace(/[\s-]/g, '');
  return RECOVERY_CODE.test(normalised) ? { kind: 'recovery', normalised } : { kind: 'malformed' };
}

/**
 * The time step `code` is right for at `nowSeconds` (within one step either
 * side), or undefined when it is right for none of them.
 */
export async function totpStepOf(
  secret: string,
  code: string,
  nowSeconds: number,
): Promise<number | undefined> {
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: nowSeconds,
      epochTolerance: TOLERANCE_SECONDS,
    });
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  } catch {
    return undefined;
  }
}

/** Ten new recovery codes, as shown to the person: `abcd-efgh-ijkl-mnop`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    // 10 bytes: 16 base32 letters exactly.
    const letters = base32(randomBytes(10));
    return (letters.match(/.{4}/g) as string[]).join('-');
  });
}

/** The stored form of a recovery code of `userId`: SHA-256 of the user and the normalised code. */
export function recoveryDigest(userId: string, code: string): string {
  const normalised = code.toLowerCase().replace(/[\s-]/g, '');
  return createHash('sha256').update(`${userId}\n${normalised}`).digest('hex');
}
