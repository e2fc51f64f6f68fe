/**
 * The operations on a user's own TOTP second factor (issue 45), with
 * `mfa.totp.enabled` (else 404). Reached with Basic (the password, and
 * `X-OTP` once a factor is confirmed), a bearer token or the session cookie
 * (then `X-OTP` where a confirmed factor must be proven).
 */
import { answer, NO_STORE, refusal, type Operation } from './operation.js';
import { BAD_INPUT, STORE_DOWN, TOO_LARGE, userIdParam } from './refusals.js';
import { RecoveryCodes, TotpConfirmation, TotpEnrolment } from './totp.js';

/** Basic (the password), a bearer token, or the session cookie. */
const BASIC_BEARER_OR_SESSION = [{ basic: [] }, { bearer: [] }, { session: [] }];

const X_OTP = 'With a factor confirmed, `X-OTP` must carry its current code or a recovery code.';

const CALLER_REFUSED = refusal(
  `Basic credentials wrong, or no (valid) bearer token or session cookie; or, ${X_OTP.charAt(0).toLowerCase()}${X_OTP.slice(1, -1)} (\`mfa_required\`: missing, wrong, replayed or expired; \`WWW-Authenticate: Basic\`, but none to a call the session cookie authenticated or a same-origin script sent: a browser would open its password dialog).`,
  'invalid_credentials',
  'invalid_token',
  'mfa_required',
);
const NOT_YOURS = refusal(
  "The path names another user, or a machine client's token; with the session cookie, a request not from the gateway's own origin.",
  'forbidden',
  'csrf_refused',
);
const TOO_MANY = refusal(
  'Too many wrong passwords, or wrong second-factor codes (`limits.secondFactor`): see `Retry-After`.',
  'too_many_requests',
);

export const enrolTotp: Operation = {
  method: 'post',
  path: '/1/users/{user_id}/mfa/totp',
  operationId: 'enrolTotp',
  summary: 'Begin a TOTP enrolment: a new secret for an authenticator app, pending until confirmed',
  description: `No body. Until confirmed, logins are as before. ${X_OTP} A confirmed factor stays in force until the new one is confirmed.`,
  tags: ['identity'],
  security: BASIC_BEARER_OR_SESSION,
  params: userIdParam,
  answers: { 201: answer('The new secret, shown once.', TotpEnrolment, NO_STORE) },
  refusals: { 401: CALLER_REFUSED, 403: NOT_YOURS, 429: TOO_MANY, 503: STORE_DOWN },
};

export const confirmTotp: Operation = {
  method: 'post',
  path: '/1/users/{user_id}/mfa/totp/confirm',
  operationId: 'confirmTotp',
  summary: 'Confirm the pending enrolment with a code: from now on a password login needs `X-OTP`',
  description:
    'Replaces an earlier factor and its recovery codes. The ten recovery codes are in this answer only.',
  tags: ['identity'],
  security: BASIC_BEARER_OR_SESSION,
  params: userIdParam,
  body: { schema: TotpConfirmation, required: true },
  answers: { 200: answer('The recovery codes, shown once.', RecoveryCodes, NO_STORE) },
  refusals: {
    400: refusal(
      `${BAD_INPUT.description} No enrolment pending (or older than 10 minutes), or the code is not right for its secret.`,
      'invalid_request',
    ),
    401: CALLER_REFUSED,
    403: NOT_YOURS,
    413: TOO_LARGE,
    429: TOO_MANY,
    503: STORE_DOWN,
  },
};

export const removeTotp: Operation = {
  method: 'delete',
  path: '/1/users/{user_id}/mfa/totp',
  operationId: 'removeTotp',
  summary:
    'Remove the TOTP factor (and its recovery codes), proven by a current code or a recovery code',
  description: X_OTP,
  tags: ['identity'],
  security: BASIC_BEARER_OR_SESSION,
  params: userIdParam,
  answers: { 204: { description: 'Removed: a password login needs no code any more.' } },
  refusals: {
    401: CALLER_REFUSED,
    403: NOT_YOURS,
    404: refusal('The user has no TOTP factor and no pending enrolment.', 'not_found'),
    429: TOO_MANY,
    503: STORE_DOWN,
  },
};
