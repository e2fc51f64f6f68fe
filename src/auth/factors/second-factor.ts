/**
 * A user's second factor at sign-in (issue 45): the one check of `X-OTP` on
 * every password login (the Basic endpoints) and of the code step on the
 * sign-in page, for a user with a confirmed TOTP authenticator.
 *
 * - A TOTP code is right for the time step before, at or after the clock's,
 *   and accepted once: its step must be later than the last one accepted,
 *   set atomically in the store (of two requests with one code, one wins;
 *   a code an attacker watched being typed is worthless once used).
 * - A recovery code is taken from the store atomically: it works once.
 * - Wrong codes are bounded per user (`limits.secondFactor`) on the store's
 *   counter, shared by every instance: a point is reserved before the code
 *   is checked (so concurrent guesses never exceed it) and given back when
 *   it was right. Past the bound: 429, however right the code.
 *
 * The secret is sealed at rest (AES-256-GCM, `auth/federation/sealed-secrets.ts`)
 * with `totp:<user id>` as the additional data: a sealed secret copied into
 * another user's record, or an IdP secret sealed under the same key, does
 * not open there.
 */
import type { AuditActor } from '../../audit/events.js';
import type { AuditRecorder } from '../../audit/recorder.js';
import { GatewayError } from '../../errors.js';
import type { Store, TotpRecord } from '../../store/types.js';
import type { SecretSealer } from '../federation/sealed-secrets.js';
import { readPresentedCode, recoveryDigest, totpStepOf } from './totp-codes.js';

export interface SecondFactorDeps {
  store: Pick<Store, 'totp' | 'loginCounter'>;
  /** The key of `mfa.totp.secretsKeyFile` (else `sso.secretsKeyFile`). */
  sealer: SecretSealer;
  /** The key's config path, for the message when a secret does not open. */
  setting: string;
  limits: { perUser: number; windowSeconds: number };
  audit: AuditRecorder;
  /** Unix milliseconds (tests move it). */
  clock: () => number;
  /** The name an authenticator app shows (`tokens.issuer`). */
  issuer: string;
}

/** Who the code is for. */
export interface FactorUser {
  id: string;
  email: string;
}

/** What proved the second factor: none was needed, a TOTP code, or a recovery code. */
export type FactorUsed = 'none' | 'totp' | 'recovery';

export interface SecondFactors {
  /** The name an authenticator app shows. */
  readonly issuer: string;
  /** Unix seconds now. */
  now(): number;
  /**
   * Proves the user's second factor with `presented` (`X-OTP`, the page's
   * code); nothing to prove when they have none.
   * @throws GatewayError `mfa_required` (401) without a code or with a wrong,
   * replayed or expired one; `too_many_requests` (429) past `limits.secondFactor`.
   */
  prove(user: FactorUser, presented: string | undefined, who: AuditActor): Promise<FactorUsed>;
  /** The time step `code` is right for now under the sealed secret, or undefined. */
  stepOf(userId: string, secretSealed: string, code: string): Promise<number | undefined>;
  seal(userId: string, secret: string): string;
}

export function createSecondFactors(deps: SecondFactorDeps): SecondFactors {
  const counter = deps.store.loginCounter({
    name: 'second-factor-user',
    points: deps.limits.perUser,
    windowSeconds: deps.limits.windowSeconds,
  });
  const now = () => Math.floor(deps.clock() / 1000);
  const open = (userId: string, sealed: string): string => {
    try {
      return deps.sealer.open(sealed, aadOf(userId));
    } catch {
      throw new GatewayError(
        'internal_error',
        `A sealed TOTP secret does not open with this key: ${deps.setting} is not the key it was sealed with (the user's factor must be reset: user mfa reset).`,
      );
    }
  };
  const stepOf = (userId: string, sealed: string, code: string) =>
    totpStepOf(open(userId, sealed), code, now());
  const failed = (user: FactorUser, who: AuditActor, reason: string) =>
    deps.audit.record('mfa_failed', who, { user_id: user.id, user_email: user.email, reason });

  return {
    issuer: deps.issuer,
    now,
    async prove(user, presented, who) {
      const record = await deps.store.totp.getTotp(user.id);
      if (record?.secretSealed === undefined) return 'none';
      if (presented === undefined || presented.trim() === '') throw codeRequired();
      const point = await counter.reserve(user.id);
      if (!point.granted) {
        await failed(user, who, 'throttled');
        throw new GatewayError('too_many_requests', 'Too many wrong codes: try again later.', {
          headers: { 'retry-after': String(point.retryAfter) },
        });
      }
      const outcome = await check({ ...deps, stepOf }, record, presented);
      if (outcome === 'totp' || outcome === 'recovery') {
        await point.refund().catch(() => undefined);
        if (outcome === 'recovery')
          await deps.audit.record('recovery_code_used', who, {
            user_id: user.id,
            user_email: user.email,
          });
        return outcome;
      }
      await failed(user, who, outcome);
      throw wrongCode();
    },
    stepOf,
    seal: (userId, secret) => deps.sealer.seal(secret, aadOf(userId)),
  };
}

/** How a presented code fared. */
type Checked = 'totp' | 'recovery' | 'wrong_code' | 'replayed';

async function check(
  deps: Pick<SecondFactorDeps, 'store'> & {
    stepOf: (userId: string, sealed: string, code: string) => Promise<number | undefined>;
  },
  record: TotpRecord,
  presented: string,
): Promise<Checked> {
  const code = readPresentedCode(presented);
  if (code.kind === 'recovery') {
    const taken = await deps.store.totp.takeRecoveryCode(
      record.userId,
      recoveryDigest(record.userId, code.normalised),
    );
    return taken ? 'recovery' : 'wrong_code';
  }
  if (code.kind !== 'totp') return 'wrong_code';
  const step = await deps.stepOf(record.userId, record.secretSealed as string, code.code);
  if (step === undefined) return 'wrong_code';
  return (await deps.store.totp.acceptTotpStep(record.userId, step)) ? 'totp' : 'replayed';
}

/** The additional data a user's TOTP secret is sealed with. */
function aadOf(userId: string): string {
  return `totp:${userId}`;
}

function codeRequired(): GatewayError {
  return new GatewayError(
    'mfa_required',
    'This account has a second factor: send the current code of its authenticator app (or a recovery code) in X-OTP.',
  );
}

function wrongCode(): GatewayError {
  return new GatewayError(
    'mfa_required',
    'The code in X-OTP is wrong, expired or used already: send a current one.',
  );
}
