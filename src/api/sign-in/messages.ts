/**
 * A refusal in words for the person at the sign-in page: one sentence per
 * code, never the error's own description (meant for a developer) and
 * never more than the JSON answer says: an unknown e-mail reads as a wrong
 * password, an unknown tenant as one the user is not a member of.
 */
import type { GatewayError } from '../../errors.js';

const WORDS: Partial<Record<GatewayError['code'], string>> = {
  invalid_credentials: 'E-mail or password is wrong.',
  mfa_required: 'That code is wrong, expired or used already. Enter the current code.',
  csrf_refused:
    'This sign-in form has expired or was sent from another site. Please sign in again.',
  tenant_access_denied: 'This account cannot sign in to that organisation.',
  email_not_verified:
    'Your e-mail address is not verified yet. We have mailed you a link: open it, confirm your address, then sign in.',
  payload_too_large: 'What was sent is too long.',
};

export function messageFor(error: GatewayError): string {
  if (error.code === 'too_many_requests') {
    const seconds = Number(error.headers['retry-after']);
    const wait = Number.isFinite(seconds) && seconds > 0 ? ` in ${seconds} seconds` : ' later';
    return `Too many attempts. Please try again${wait}.`;
  }
  if (error.code === 'invalid_request') return error.message;
  if (error.status >= 500) return 'Signing in is not possible right now. Please try again later.';
  if (error.code === 'invalid_credentials' && error.detail?.startsWith('passkey') === true)
    return 'The passkey was not accepted. Try again, or sign in with your password.';
  return WORDS[error.code] ?? 'The sign-in did not succeed. Please try again.';
}

/**
 * What the company sign-in (`/1/sign-in/sso`) sends the browser back with,
 * in `error=`: one of these codes, in words; any other value shows nothing
 * (the page never echoes what a link says).
 */
const COMPANY_NOTICES: Readonly<Record<string, string>> = {
  no_company_sign_in:
    'There is no company sign-in for this address. Sign in with your password, or ask your administrator.',
  company_sign_in_cancelled: 'The sign-in at your company was cancelled.',
  company_sign_in_failed: 'The sign-in at your company did not succeed. Please try again.',
};

export function companyNotice(code: string | undefined): string | undefined {
  return code === undefined || !Object.hasOwn(COMPANY_NOTICES, code)
    ? undefined
    : COMPANY_NOTICES[code];
}
