/**
 * A user's TOTP second factor, once for every front end (issue 45): the
 * identity API (`/1/users/current/mfa/totp…`, the user), the CLI's
 * `user mfa reset` (the operator, for a person who lost both the device and
 * the recovery codes) and `user show`, and the console next.
 *
 * - Enrolling writes a pending enrolment: a new secret the user's app is
 *   given, which changes nothing at login until a code of it confirms it.
 * - With a factor confirmed already, enrolling again (a new phone) and
 *   removing need that factor proven in the same request (`X-OTP`; a
 *   Basic login proves it on the way in): a stolen bearer token or session
 *   cannot swap or strip the factor. The confirmed factor stays in force
 *   until the new one is confirmed, which replaces it and its recovery codes.
 * - Confirming answers the ten recovery codes, once: the store keeps their
 *   digests only.
 */
import type { AuditRecorder } from '../audit/recorder.js';
import type { FactorUsed, SecondFactors } from '../auth/factors/second-factor.js';
import {
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  recoveryDigest,
} from '../auth/factors/totp-codes.js';
import { GatewayError } from '../errors.js';
import type { Store, UserRecord } from '../store/types.js';
import type { Actor, OperatorActor } from './actor.js';

/** A pending enrolment must be confirmed within this many seconds. */
export const PENDING_TOTP_SECONDS = 600;

export interface TotpDeps {
  store: Pick<Store, 'totp'>;
  factors: SecondFactors;
  audit: AuditRecorder;
}

/**
 * How the request proves the user's second factor, where one is needed:
 * proven already on the way in (a Basic login checked `X-OTP`), or a code
 * to check now (`X-OTP` with a bearer token or the session cookie).
 */
export type FactorProof = { proven: true } | { proven: false; presented: string | undefined };

/** What the user's authenticator app is given. */
export interface TotpEnrolment {
  /** Base32, for typing in. */
  secret: string;
  otpauthUri: string;
}

type Self = Extract<Actor, { kind: 'self' }>;

/**
 * Begins an enrolment (replacing a pending one).
 * @throws GatewayError `mfa_required`, `too_many_requests` when a factor is
 * confirmed and the request does not prove it
 */
export async function beginTotpEnrolment(
  deps: TotpDeps,
  who: Self,
  user: UserRecord,
  proof: FactorProof,
): Promise<TotpEnrolment> {
  await proveIfEnrolled(deps, who, user, proof);
  const secret = newTotpSecret();
  const written = await deps.store.totp.putPendingTotp(user.id, {
    secretSealed: deps.factors.seal(user.id, secret),
    createdAt: deps.factors.now(),
  });
  if (!written) throw new GatewayError('not_found', 'The user no longer exists.');
  return { secret, otpauthUri: otpauthUri(deps.factors.issuer, user.email, secret) };
}

/**
 * Confirms the pending enrolment with a code of its secret: it becomes the
 * user's factor (the code used up), replacing an earlier one and its codes.
 * @returns the ten recovery codes, shown once
 * @throws GatewayError `invalid_request` when no enrolment is pending (or it
 * expired) or the code is not right for it
 */
export async function confirmTotpEnrolment(
  deps: TotpDeps,
  who: Self,
  user: UserRecord,
  code: string,
): Promise<string[]> {
  const pending = (await deps.store.totp.getTotp(user.id))?.pending;
  if (pending === undefined || deps.factors.now() - pending.createdAt > PENDING_TOTP_SECONDS)
    throw new GatewayError(
      'invalid_request',
      'No TOTP enrolment is pending (or it expired): begin one with POST /1/users/current/mfa/totp.',
    );
  const step = await deps.factors.stepOf(user.id, pending.secretSealed, code.trim());
  if (step === undefined)
    throw new GatewayError(
      'invalid_request',
      "The code is not the authenticator app's current one for the new secret.",
    );
  const codes = newRecoveryCodes();
  const confirmed = await deps.store.totp.confirmTotp(user.id, pending.secretSealed, {
    step,
    recoveryDigests: codes.map((c) => recoveryDigest(user.id, c)),
    at: deps.factors.now(),
  });
  if (!confirmed)
    throw new GatewayError('invalid_request', 'The enrolment changed meanwhile: begin it again.');
  await deps.audit.record('mfa_enrolled', who.audit, {
    user_id: user.id,
    user_email: user.email,
  });
  return codes;
}

/**
 * Removes the user's factor (and a pending enrolment).
 * @throws GatewayError `not_found` when there is none; `mfa_required`,
 * `too_many_requests` when the factor is not proven
 */
export async function removeTotp(
  deps: TotpDeps,
  who: Self,
  user: UserRecord,
  proof: FactorProof,
): Promise<void> {
  const record = await deps.store.totp.getTotp(user.id);
  if (record === null) throw new GatewayError('not_found', 'The user has no TOTP factor.');
  await proveIfEnrolled(deps, who, user, proof);
  await deps.store.totp.removeTotp(user.id);
  if (record.secretSealed !== undefined)
    await deps.audit.record('mfa_removed', who.audit, {
      user_id: user.id,
      user_email: user.email,
      reason: 'removed',
    });
}

/**
 * The operator's way back for a person who lost the device and the codes
 * (`user mfa reset EMAIL`): the factor removed without a code.
 * @returns whether the user had one (or a pending enrolment)
 */
export async function resetTotp(
  deps: Pick<TotpDeps, 'store' | 'audit'>,
  who: OperatorActor,
  user: UserRecord,
): Promise<boolean> {
  const record = await deps.store.totp.getTotp(user.id);
  if (record === null) return false;
  await deps.store.totp.removeTotp(user.id);
  await deps.audit.record('mfa_removed', who.audit, {
    user_id: user.id,
    user_email: user.email,
    reason: 'reset',
  });
  return true;
}

/** The user's TOTP as `user show` names it (never its secret); undefined without a confirmed one. */
export async function totpFactorOf(
  store: Pick<Store, 'totp'>,
  userId: string,
): Promise<{ type: 'totp'; confirmed_at: number; recovery_codes_left: number } | undefined> {
  const record = await store.totp.getTotp(userId);
  if (record?.confirmedAt === undefined) return undefined;
  return {
    type: 'totp',
    confirmed_at: record.confirmedAt,
    recovery_codes_left: record.recoveryCodesLeft,
  };
}

async function proveIfEnrolled(
  deps: TotpDeps,
  who: Self,
  user: UserRecord,
  proof: FactorProof,
): Promise<FactorUsed | undefined> {
  if (proof.proven) return undefined;
  return deps.factors.prove(user, proof.presented, who.audit);
}
