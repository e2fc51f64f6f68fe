/**
 * The operations on a user's passkeys (issue 45; `mfa.passkeys.enabled`):
 * registered and managed in a browser session (the session cookie only; an
 * unsafe method from the gateway's own origin), and the sign-in page's
 * passkey options. The sign-in itself is `POST /1/sign-in` with `step=passkey`.
 */
import { z } from 'zod';
import { ANONYMOUS, answer, NO_STORE, refusal, type Operation } from './operation.js';
import {
  Passkey,
  PasskeyCreationOptions,
  PasskeyList,
  PasskeyOptionsForm,
  PasskeyRegistration,
  PasskeyRequestOptions,
} from './passkeys.js';
import { BAD_INPUT, STORE_DOWN, TOO_LARGE, userIdParam } from './refusals.js';

/** The session cookie (`sessions.cookie.name`) alone. */
export const SESSION = [{ session: [] }];

const PASSKEYS = '/1/users/{user_id}/passkeys';
const tags = ['identity'];

const NO_SESSION = refusal(
  'No session cookie (a bearer token does not count here), or one malformed, unknown, expired or ended, or sent twice.',
  'invalid_token',
);
const OTHER_USER = 'The path names another user (`forbidden`)';
const refusedSafe = refusal(`${OTHER_USER}.`, 'forbidden');
const refusedUnsafe = refusal(
  `${OTHER_USER}; or the request did not come from the gateway's own origin (\`csrf_refused\`: \`Sec-Fetch-Site\`, else \`Origin\`).`,
  'forbidden',
  'csrf_refused',
);

export const passkeyOptions: Operation = {
  method: 'post',
  path: `${PASSKEYS}/options`,
  operationId: 'passkeyCreationOptions',
  summary: 'Begin registering a passkey: the WebAuthn creation options',
  description:
    "The challenge is kept for this browser session for 5 minutes and answers one registration; asking again replaces it. The user's passkeys are excluded, so an authenticator holding one is not registered twice.",
  tags,
  security: SESSION,
  params: userIdParam,
  answers: { 200: answer('The creation options.', PasskeyCreationOptions, NO_STORE) },
  refusals: { 401: NO_SESSION, 403: refusedUnsafe, 503: STORE_DOWN },
};

export const registerPasskey: Operation = {
  method: 'post',
  path: PASSKEYS,
  operationId: 'registerPasskey',
  summary: 'Register a passkey: the browser’s answer to the creation options',
  description:
    'Verified against the challenge kept for this session (taken: one answer per options), the origin `publicUrl` and the rpId, user verification required. Records `passkey_added`.',
  tags,
  security: SESSION,
  params: userIdParam,
  body: { schema: PasskeyRegistration, required: true },
  answers: { 201: answer('The passkey registered.', Passkey, NO_STORE) },
  refusals: {
    400: refusal(
      'Malformed input; no live challenge for this session (never asked, expired, used); an answer that does not verify (another challenge, origin or rpId, no user verification); a credential registered already; or 20 passkeys held already.',
      'invalid_request',
    ),
    401: NO_SESSION,
    403: refusedUnsafe,
    413: TOO_LARGE,
    503: STORE_DOWN,
  },
};

export const listPasskeys: Operation = {
  method: 'get',
  path: PASSKEYS,
  operationId: 'listPasskeys',
  summary: "The caller's passkeys, oldest first",
  tags,
  security: SESSION,
  params: userIdParam,
  answers: { 200: answer('The passkeys.', PasskeyList, NO_STORE) },
  refusals: { 401: NO_SESSION, 403: refusedSafe, 503: STORE_DOWN },
};

export const removePasskey: Operation = {
  method: 'delete',
  path: `${PASSKEYS}/{passkey_id}`,
  operationId: 'removePasskey',
  summary: 'Remove one of the caller’s passkeys: it signs in no more, on any instance',
  description: 'Records `passkey_removed`.',
  tags,
  security: SESSION,
  params: userIdParam.extend({
    passkey_id: z.string().meta({ description: 'A `passkey_id` of `GET …/passkeys`.' }),
  }),
  answers: { 204: { description: 'Removed.' } },
  refusals: {
    401: NO_SESSION,
    403: refusedUnsafe,
    404: refusal(
      "No such passkey of the caller's (unknown, removed, or another user's).",
      'not_found',
    ),
    503: STORE_DOWN,
  },
};

export const passkeySignInOptions: Operation = {
  method: 'post',
  path: '/1/sign-in/passkey/options',
  operationId: 'passkeySignInOptions',
  summary: "The sign-in page's passkey options (its script asks for them)",
  description:
    'The login-CSRF rule of `POST /1/sign-in`: the pre-session cookie, its form token, the same origin. The challenge is kept for that cookie for 5 minutes and answers one sign-in (`POST /1/sign-in` with `step=passkey` and `credential`); asking again replaces it.',
  tags,
  security: ANONYMOUS,
  body: {
    schema: PasskeyOptionsForm,
    required: true,
    mediaType: 'application/x-www-form-urlencoded',
  },
  answers: { 200: answer('The request options.', PasskeyRequestOptions, NO_STORE) },
  refusals: {
    400: BAD_INPUT,
    403: refusal(
      'Login CSRF: no pre-session cookie, a token not its own, or another origin.',
      'csrf_refused',
    ),
    413: TOO_LARGE,
    503: STORE_DOWN,
  },
};
