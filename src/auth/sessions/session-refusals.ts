/**
 * Why a session cookie was refused. As for a bearer token
 * (`../tokens/token-refusals.ts`), the client is told `invalid_token` and no
 * more; the reason is the error's `detail`, for the operator's log. Besides
 * these, a session is refused for the session guard's own reasons (`revoked`
 * when signed out, `session_ended`, `membership_ended`, `unknown_user`) and
 * `malformed` for a value not of the cookie's shape.
 */
import { GatewayError } from '../../errors.js';
import type { TokenRefusal } from '../tokens/token-refusals.js';

/**
 * A reason only a session is refused for (the `detail` of its `invalid_token`):
 * in the one list of refusal reasons (`TOKEN_REFUSALS`), so the access log's
 * `tokenRefusal` and `tenant_gateway_token_refusals_total{reason}` name it.
 */
export type SessionRefusal = Extract<
  TokenRefusal,
  'session_unknown' | 'session_secret' | 'session_idle' | 'session_expired'
>;

/** The `invalid_token` refusal of a session, with why for the log. */
export function sessionRefused(reason: SessionRefusal | 'malformed'): GatewayError {
  return new GatewayError('invalid_token', 'The session is not valid; sign in again.', {
    detail: reason,
  });
}
