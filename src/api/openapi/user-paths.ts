/** OpenAPI operations on users: signing up and changing the password. */
import {
  BAD_INPUT,
  BASIC_REFUSED,
  type Json,
  json,
  ref,
  refusal,
  REQUEST_ID_HEADER,
  STORE_DOWN,
  THROTTLED,
  TOO_LARGE,
  userIdParameter,
} from './answers.js';

/** `/1/users` */
export function signupPath(): Json {
  return {
    post: {
      operationId: 'signUp',
      summary: 'Sign up (when `signup.enabled`): a user and their personal tenant',
      tags: ['identity'],
      security: [],
      requestBody: { required: true, content: json(ref('SignupRequest')) },
      responses: {
        '201': {
          description: 'The new user and personal tenant.',
          headers: REQUEST_ID_HEADER,
          content: json(ref('SignupResponse')),
        },
        '400': BAD_INPUT,
        '403': refusal(
          'Signup is disabled, or the address is of a domain a tenant has verified: its people sign in through their organisation (issue 42).',
          'forbidden',
        ),
        '409': refusal('The e-mail is registered already (any letter case).', 'user_exists'),
        '413': TOO_LARGE,
        '429': refusal(
          'Too many signups from this address: see `Retry-After`.',
          'too_many_requests',
        ),
        '503': STORE_DOWN,
      },
    },
  };
}

/** `/1/users/{user_id}/password` */
export function passwordPath(): Json {
  return {
    put: {
      operationId: 'changePassword',
      summary: 'Change the password: every token of the user stops working at once',
      tags: ['identity'],
      security: [{ basic: [] }],
      parameters: [userIdParameter],
      requestBody: { required: true, content: json(ref('PasswordChange')) },
      responses: {
        '204': { description: 'Changed; every session of the user has ended.' },
        '400': BAD_INPUT,
        '401': BASIC_REFUSED,
        '403': refusal('The path names another user.', 'forbidden'),
        '413': TOO_LARGE,
        '429': THROTTLED,
        '503': STORE_DOWN,
      },
    },
  };
}
