/**
 * Why a bearer token was refused. The client is told `invalid_token` and no
 * more (RFC 6750 §3.1: no oracle telling an attacker which check failed); the
 * operator gets the reason in the access log (`tokenRefusal`) and in
 * `tenant_gateway_token_refusals_total{reason}`. A fixed list, so the label
 * stays bounded; carried on the error as its `detail`.
 */
import { GatewayError } from '../../errors.js';

/** Every reason there is: the metric exports each from the start. */
export const TOKEN_REFUSALS = [
  /** No Authorization header, or an empty one. */
  'missing',
  /** An Authorization header of another scheme, or not one token (RFC 6750 §2.1). */
  'not_bearer',
  /** Not a JWS compact token, or a header or payload that is not JSON. */
  'malformed',
  'bad_signature',
  /** No `kid`, or one no key of the key set has (after a key directory re-read). */
  'unknown_kid',
  /** An algorithm not accepted, or not the algorithm of the key its `kid` names. */
  'wrong_alg',
  'wrong_issuer',
  'wrong_audience',
  /** A `typ` other than `at+jwt` (RFC 9068 §2.1). */
  'wrong_type',
  /** Past its `exp`, or older than `tokens.ttlSeconds` (both with the clock skew). */
  'expired',
  /** `nbf` in the future. */
  'not_yet_valid',
  /** `iat` in the future beyond the clock skew. */
  'issued_in_future',
  /** A required claim missing or of the wrong type. */
  'claims',
  /** Ended by its holder (`DELETE /1/token`). */
  'revoked',
  /** The user's sessions ended (password changed, user disabled). */
  'session_ended',
  /** The user is no longer a member of the token's tenant. */
  'membership_ended',
  /** The token's user no longer exists. */
  'unknown_user',
  /** A machine client's token whose client was removed, rotated or has expired. */
  'client_ended',
  /** An API key not of the `tgk_` form, or whose checksum fails: refused without a lookup. */
  'malformed_key',
  /** An API key the store has not, or whose secret does not match. */
  'unknown_key',
  /** An API key this instance accepted before, since removed or expired, or its client removed or expired. */
  'key_ended',
  /** Two session cookies of the session's name (one tossed from a sibling host): refused, never one picked. */
  'two_cookies',
  /** A session cookie naming no session: never begun, ended and removed, or past its absolute end. */
  'session_unknown',
  /** A session cookie whose id names a session, with a secret that is not its secret. */
  'session_secret',
  /** A session unused for `sessions.idleTimeoutSeconds` (on any instance). */
  'session_idle',
  /** A session past `sessions.absoluteTimeoutSeconds` after its sign-in. */
  'session_expired',
] as const;

export type TokenRefusal = (typeof TOKEN_REFUSALS)[number];

const KNOWN = new Set<string>(TOKEN_REFUSALS);

/** The `invalid_token` refusal, with why for the log. */
export function tokenRefused(
  reason: TokenRefusal,
  description: string,
  options: { cause?: unknown; headers?: Record<string, string> } = {},
): GatewayError {
  return new GatewayError('invalid_token', description, { ...options, detail: reason });
}

/** Why an `invalid_token` refusal was made; undefined for any other error. */
export function tokenRefusalOf(err: {
  code: string;
  detail?: string | undefined;
}): TokenRefusal | undefined {
  return err.code === 'invalid_token' && err.detail !== undefined && KNOWN.has(err.detail)
    ? (err.detail as TokenRefusal)
    : undefined;
}
