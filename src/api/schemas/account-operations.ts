/**
 * The mailed account flows (`mail`; issue 45): the e-mail verification link
 * and the password reset. Each link's GET is a page with a button or a form,
 * so a mail scanner following it uses nothing; its POST does the work. A
 * JSON post is answered as an API is (204, 202), the pages' form post
 * (`application/x-www-form-urlencoded`) with a page saying it worked (200),
 * and a refusal as a page to a request that accepts `text/html` before JSON.
 */
import {
  PasswordReset,
  PasswordResetRequest,
  PasswordResetRequested,
  LinkTokenParam,
} from './accounts.js';
import { answer, ANONYMOUS, refusal, type Operation } from './operation.js';
import { BAD_INPUT, STORE_DOWN, TOO_LARGE } from './refusals.js';
import { page } from './sign-in-operations.js';

const DEAD_LINK = refusal(
  'The link is not live: used already, past its time (24 hours for a verification, 30 minutes for a reset), never issued, malformed, or its user changed their address (or, for a reset, their password) since. One answer for all.',
  'not_found',
);

export const showEmailVerification: Operation = {
  method: 'get',
  path: '/1/email-verifications/{token}',
  operationId: 'showEmailVerification',
  summary: 'The mailed verification link: a page with a button (uses nothing)',
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  params: LinkTokenParam,
  answers: {
    200: page('The page with the button that posts the link (`Referrer-Policy: no-referrer`).'),
  },
  refusals: { 404: DEAD_LINK, 503: STORE_DOWN },
};

export const confirmEmail: Operation = {
  method: 'post',
  path: '/1/email-verifications/{token}',
  operationId: 'confirmEmail',
  summary: 'Verify the address the link was mailed to (once)',
  description:
    "No body. The page's form post is answered 200 with a page saying it worked and linking to the sign-in page.",
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  params: LinkTokenParam,
  answers: {
    200: page('The form post: the address is verified.'),
    204: answer('The address is verified; the link is used up.'),
  },
  refusals: { 404: DEAD_LINK, 503: STORE_DOWN },
};

export const showPasswordResetRequest: Operation = {
  method: 'get',
  path: '/1/password-resets',
  operationId: 'showPasswordResetRequest',
  summary: 'The "forgot your password" page: an e-mail form',
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  answers: { 200: page('The e-mail form.') },
  refusals: {},
};

export const requestPasswordReset: Operation = {
  method: 'post',
  path: '/1/password-resets',
  operationId: 'requestPasswordReset',
  summary: 'Mail a password-reset link: 202, the same for every address',
  description:
    "Answered before the address is looked up: the same body after the same work whether it has an account or not. A user with a password of their own (not disabled, not of an identity provider) is mailed a link valid 30 minutes, at most `limits.passwordReset.perEmail` per address and window (past it nothing is sent, and the answer is the same). The page's form post is answered 202 with a page.",
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  body: { schema: PasswordResetRequest, required: true },
  answers: {
    202: answer('Taken; a mail follows if the address has an account.', PasswordResetRequested),
  },
  refusals: {
    400: BAD_INPUT,
    413: TOO_LARGE,
    429: refusal(
      'More than `limits.passwordReset.perIp` requests from this client IP in the window: see `Retry-After`.',
      'too_many_requests',
    ),
    503: STORE_DOWN,
  },
};

export const showPasswordReset: Operation = {
  method: 'get',
  path: '/1/password-resets/{token}',
  operationId: 'showPasswordReset',
  summary: 'The mailed reset link: a new-password form (uses nothing)',
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  params: LinkTokenParam,
  answers: { 200: page('The new-password form (`Referrer-Policy: no-referrer`).') },
  refusals: { 404: DEAD_LINK, 503: STORE_DOWN },
};

export const resetPassword: Operation = {
  method: 'post',
  path: '/1/password-resets/{token}',
  operationId: 'resetPassword',
  summary: 'Set a new password by the mailed link: every session of the user ends everywhere',
  description:
    "The password is checked first (a refused one leaves the link good); then the link is used up, the password set, every token, refresh family and browser session of the user ended on every instance before the answer, and the address marked verified. The page's form post is answered 200 with a page.",
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  params: LinkTokenParam,
  body: { schema: PasswordReset, required: true },
  answers: {
    200: page('The form post: the password is set.'),
    204: answer('The password is set; every session of the user has ended.'),
  },
  refusals: { 400: BAD_INPUT, 404: DEAD_LINK, 413: TOO_LARGE, 503: STORE_DOWN },
};
