/**
 * How a sign-in on the sign-in page ended (`tenant_gateway_sign_ins_total`'s
 * `outcome`): a small fixed list, each exported from the start at 0.
 */
export const SIGN_IN_OUTCOMES = [
  /** A session began. */
  'signed_in',
  /** Unknown e-mail or wrong password (one outcome: they are one answer). */
  'wrong_credentials',
  /** The password was right, the address not verified yet (`signup.verifyEmail`): a new link mailed. */
  'email_not_verified',
  /** The password was right and the user has a second factor: the code step was shown. */
  'code_needed',
  /** The code step refused a wrong, replayed or expired code (or a used recovery code). */
  'wrong_code',
  /** The brute-force guard refused (429). */
  'throttled',
  /** The login-CSRF rule refused the post. */
  'csrf_refused',
  /** The tenant named does not exist or the user is not a member (one answer). */
  'not_member',
  /** The tenant choice came after its pending sign-in expired or was used. */
  'expired',
  /** A field missing, repeated or too large. */
  'invalid_request',
  /** The store failed (5xx). */
  'unavailable',
] as const;

export type SignInOutcome = (typeof SIGN_IN_OUTCOMES)[number];
