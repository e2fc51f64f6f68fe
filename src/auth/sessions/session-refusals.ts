/**
 * Why a session cookie was refused. As for a bearer token
 * (`../tokens/token-refusals.ts`), the client is told `invalid_token` and no
 * more; the reason is the error's `detail`, for the operator's log. Besides
 * these, a session is refused for the session guard's own reasons (`revoked`
 * when signed out, `session_ended`, `membership_ended`, `unknown_user`) and
 * `malformed` for a value not of the cookie's shape.
 */
import { GatewayError } from '../../errors.js';

/** The reasons only a session has. */
export const SESSION_REFUSALS = [
  /** No such session: never begun, ended and removed, or past its absolute end (the store forgot it). */
  'session_unknown',
  /** The id names a session, but the secret is not its secret. */
  'session_secret',
  /** Unused for `sessions.idleTimeoutSeconds` (on any instance). */
  'session_idle',
  /** Past `sessions.absoluteTimeoutSeconds` after its sign-in. */
  'session_expired',
] as const;

export type SessionRefusal = (typeof SESSION_REFUSALS)[number];

/** The `invalid_token` refusal of a session, with why for the log. */
export function sessionRefused(reason: SessionRefusal | 'malformed'): GatewayError {
  return new GatewayError('invalid_token', 'The session is not valid; sign in again.', {
    detail: reason,
  });
}
