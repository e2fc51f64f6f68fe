/**
 * The pages of the mailed account links (issue 45), in the sign-in page's
 * frame (`page-layout.ts`: its stylesheet, no script): the e-mail
 * verification's button (a GET shows it and uses nothing, so a mail
 * scanner that follows the link verifies nothing), the password reset's
 * e-mail form and new-password form, and what each post did. The token is
 * in the path the forms post to, escaped; a page never echoes a password.
 */
import { escapeHtml } from '../../text/html.js';
import { ALERT_ID, alert, layout } from './page-layout.js';
import { PASSWORD_RESETS_PATH, SIGN_IN_PATH } from './sign-in-page.js';

/** Where the verification's button posts: the link's own path. */
export const EMAIL_VERIFICATIONS_PATH = '/1/email-verifications';

const signInLink = `<p><a href="${SIGN_IN_PATH}">Sign in</a></p>\n`;

/** `GET /1/email-verifications/{token}`: the button that verifies. */
export function confirmEmailPage(token: string): string {
  return layout(
    'Confirm your e-mail address',
    `<p>Press the button to confirm that this address is yours.</p>
<form method="post" action="${EMAIL_VERIFICATIONS_PATH}/${escapeHtml(token)}">
<button type="submit" autofocus>Confirm my address</button>
</form>
`,
  );
}

/** The button's post, done. */
export function emailConfirmedPage(): string {
  return layout(
    'Your e-mail address is confirmed',
    `<p>Thank you: you can sign in now.</p>\n${signInLink}`,
  );
}

/** `GET /1/password-resets`: the e-mail to mail a link to. */
export function forgotPasswordPage(error?: string): string {
  const described =
    error === undefined ? '' : ` aria-describedby="${ALERT_ID}" aria-invalid="true"`;
  return layout(
    'Reset your password',
    `${alert(error)}<p>Enter the e-mail address of your account: we will mail it a link to choose a new password.</p>
<form method="post" action="${PASSWORD_RESETS_PATH}">
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="email" required${described}${error === undefined ? ' autofocus' : ''}>
<button type="submit">Mail me a link</button>
</form>
${signInLink}`,
  );
}

/** The e-mail form's post: the same page whatever the address. */
export function resetRequestedPage(): string {
  return layout(
    'Check your mail',
    `<p>If an account has this address, a link to choose a new password is on its way to it. The link works once, within 30 minutes.</p>\n${signInLink}`,
  );
}

/** `GET /1/password-resets/{token}`: the new password. */
export function newPasswordPage(token: string, error?: string): string {
  const described =
    error === undefined ? '' : ` aria-describedby="${ALERT_ID}" aria-invalid="true"`;
  return layout(
    'Choose a new password',
    `${alert(error)}<form method="post" action="${PASSWORD_RESETS_PATH}/${escapeHtml(token)}">
<label for="password">New password (8 to 72 bytes)</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="8"${described}${error === undefined ? ' autofocus' : ''}>
<button type="submit">Set my password</button>
</form>
`,
  );
}

/** The new password's post, done. */
export function passwordResetPage(): string {
  return layout(
    'Your password is set',
    `<p>Every session of your account has ended: sign in with your new password.</p>\n${signInLink}`,
  );
}

/** A link that is not live (used, expired, never issued), as a page. */
export function deadLinkPage(message: string): string {
  return layout(
    'This link does not work',
    `${alert(message)}<p><a href="${PASSWORD_RESETS_PATH}">Ask for a new password-reset link</a></p>\n${signInLink}`,
  );
}
