/**
 * Users' TOTP second factor (issue 45): the confirmed authenticator's secret
 * (sealed, never plain: `auth/factors/totp-secrets.ts`), a pending
 * enrolment waiting for its first code, the last time step accepted (a code
 * is accepted once: RFC 6238 §5.2) and the recovery codes as digests. The
 * totp slice of the store (`Store.totp`); implemented by `memory-totp.ts`
 * and `redis-totp.ts`. A user's removal removes their record.
 */

/** An enrolment begun and not yet confirmed by a code. */
export interface PendingTotp {
  /** The new secret, sealed for the user. */
  secretSealed: string;
  /** Unix seconds. */
  createdAt: number;
}

/** What the store keeps of one user's TOTP. */
export interface TotpRecord {
  userId: string;
  /** The confirmed secret, sealed for the user; absent while the user has only a pending enrolment. */
  secretSealed?: string;
  /** Unix seconds of the confirmation; absent with `secretSealed`. */
  confirmedAt?: number;
  /** The last time step (RFC 6238 `T`) a code was accepted for; 0 before any. */
  lastStep: number;
  /** How many recovery codes are left (their digests never leave the store). */
  recoveryCodesLeft: number;
  pending?: PendingTotp;
}

/**
 * The store's TOTP records. Every write that a concurrent request could race
 * (a step accepted, a recovery code taken, a confirmation) is one atomic step
 * in every backend: of two requests with the same code, one wins.
 */
export interface TotpStore {
  /**
   * Sets the user's pending enrolment, replacing an earlier pending one; a
   * confirmed secret and its recovery codes stay as they are.
   * @returns false when there is no such user (nothing written).
   */
  putPendingTotp(userId: string, pending: PendingTotp): Promise<boolean>;
  /** The user's record; null when they have neither a factor nor a pending enrolment. */
  getTotp(userId: string): Promise<TotpRecord | null>;
  /**
   * Makes the pending enrolment sealed as `secretSealed` the user's factor,
   * replacing a confirmed one and all its recovery codes by `recoveryDigests`,
   * with `step` as the last step accepted (the confirming code is used up).
   * @returns false when the pending enrolment is not (or no longer) that one.
   */
  confirmTotp(
    userId: string,
    secretSealed: string,
    confirmation: { step: number; recoveryDigests: readonly string[]; at: number },
  ): Promise<boolean>;
  /**
   * Records `step` as accepted when the user has a confirmed factor and
   * `step` is later than the last step accepted.
   * @returns whether it was (false: a replay, or no factor).
   */
  acceptTotpStep(userId: string, step: number): Promise<boolean>;
  /** Takes one recovery code by its digest. @returns true once per code, false after. */
  takeRecoveryCode(userId: string, digest: string): Promise<boolean>;
  /** Removes the user's factor, recovery codes and pending enrolment. @returns whether there was any. */
  removeTotp(userId: string): Promise<boolean>;
}
