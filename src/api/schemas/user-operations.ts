/** The operations on users: signing up and changing the password. */
import { answer, BASIC, PUBLIC, refusal, type Operation } from './operation.js';
import {
  BAD_INPUT,
  BASIC_REFUSED,
  STORE_DOWN,
  THROTTLED,
  TOO_LARGE,
  userIdParam,
} from './refusals.js';
import { PasswordChange, SignupRequest, SignupResponse } from './users.js';

export const signUp: Operation = {
  method: 'post',
  path: '/1/users',
  operationId: 'signUp',
  summary: 'Sign up (when `signup.enabled`): a user and their personal tenant',
  tags: ['identity'],
  security: PUBLIC,
  body: { schema: SignupRequest, required: true },
  answers: { 201: answer('The new user and personal tenant.', SignupResponse) },
  refusals: {
    400: BAD_INPUT,
    403: refusal(
      'Signup is disabled, or the address is of a domain a tenant has verified: its people sign in through their organisation (issue 42).',
      'forbidden',
    ),
    409: refusal('The e-mail is registered already (any letter case).', 'user_exists'),
    413: TOO_LARGE,
    429: refusal('Too many signups from this address: see `Retry-After`.', 'too_many_requests'),
    503: STORE_DOWN,
  },
};

export const changePassword: Operation = {
  method: 'put',
  path: '/1/users/{user_id}/password',
  operationId: 'changePassword',
  summary: 'Change the password: every token of the user stops working at once',
  tags: ['identity'],
  security: BASIC,
  params: userIdParam,
  body: { schema: PasswordChange, required: true },
  answers: { 204: { description: 'Changed; every session of the user has ended.' } },
  refusals: {
    400: BAD_INPUT,
    401: BASIC_REFUSED,
    403: refusal('The path names another user.', 'forbidden'),
    413: TOO_LARGE,
    429: THROTTLED,
    503: STORE_DOWN,
  },
};
