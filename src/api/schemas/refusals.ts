/** The refusals several operations give alike, and the path parameters they share. */
import { z } from 'zod';
import { refusal } from './operation.js';

export const BAD_INPUT = refusal(
  'Malformed input (details in `error_description`).',
  'invalid_request',
);
export const STORE_DOWN = refusal(
  'The store is unreachable: nobody is let in on a guess.',
  'unavailable',
);
export const BUG = refusal(
  'A bug or a corrupt record, logged with the request id; never described.',
  'internal_error',
);
export const BASIC_REFUSED = refusal(
  'Basic credentials missing, malformed or wrong, or the account disabled (one answer for all); or (`mfa_required`) the user has a second factor and `X-OTP` is missing, wrong, replayed or expired.',
  'invalid_credentials',
  'mfa_required',
);
export const BEARER_REFUSED = refusal(
  'The bearer token is missing, malformed, expired, revoked or its session ended.',
  'invalid_token',
);
/** Where a bearer token or the session cookie is taken (`sessionOrBearer`). */
export const CALLER_REFUSED = refusal(
  'No bearer token and no session cookie; either one malformed, unknown, expired or ended; or the cookie sent twice (one set by another host).',
  'invalid_token',
);
export const THROTTLED = refusal(
  'Too many login attempts (wrong passwords, refused passkeys, or wrong second-factor codes): see `Retry-After`.',
  'too_many_requests',
);
export const TOO_LARGE = refusal(
  'The body is larger than `limits.bodyBytes`.',
  'payload_too_large',
);

export const userIdParam = z.object({
  user_id: z.string().meta({ description: "The caller's own user id, or `current`." }),
});
export const tenantIdParam = z.object({
  tenant_id: z.string().meta({ description: "The token's tenant id, or `current`." }),
});
