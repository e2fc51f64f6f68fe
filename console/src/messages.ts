/**
 * The identity API's error CODEs as sentences that say what to do; the API's
 * own description follows in smaller print for the details.
 */
import { ApiError } from './api';

const SENTENCES: Record<string, string> = {
  network: 'The gateway could not be reached. Check your connection and try again.',
  invalid_token: 'Your session has ended. Sign in again to continue.',
  invalid_credentials: 'The password is not right.',
  csrf_refused: 'The request did not come from this page. Reload the page and try again.',
  forbidden: 'You are not allowed to do this.',
  tenant_mismatch: 'This page belongs to another tenant. Switch to that tenant first.',
  tenant_access_denied: 'You are not a member of that tenant.',
  insufficient_scope: 'Your role does not allow this.',
  invalid_request: 'Something entered is not valid.',
  invalid_scope: 'A machine client can hold only scopes your own role has.',
  domain_not_verified: 'Verify the domain first: publish its DNS record, then press “Verify”.',
  domain_taken: 'Another tenant has already verified this domain.',
  issuer_in_use: "Another tenant's identity provider already uses this issuer and client id.",
  user_exists: 'Someone with this e-mail address already has an account.',
  not_found: 'It is no longer there: someone may have removed it. Reload the page.',
  too_many_requests: 'Too many attempts. Wait a moment, then try again.',
  payload_too_large: 'What was entered is too large.',
  mfa_required: 'Enter a current code from your authenticator app (or a recovery code).',
  passkey_not_made:
    'No passkey was made: it was cancelled, or this device holds one for this account already.',
  email_not_verified: 'That e-mail address is not verified yet: follow the link mailed to it.',
  unavailable: 'The gateway cannot reach its store right now. Try again in a minute.',
  bad_gateway: 'The gateway could not reach a service it needs. Try again in a minute.',
  gateway_timeout: 'The gateway waited too long for a service it needs. Try again.',
  internal_error:
    'Something went wrong in the gateway. Try again; if it persists, tell your operator.',
};

export interface Problem {
  sentence: string;
  detail: string | undefined;
}

export function problemOf(err: unknown): Problem {
  if (err instanceof ApiError) {
    const sentence = SENTENCES[err.code] ?? 'The gateway refused this.';
    return { sentence, detail: err.description === sentence ? undefined : err.description };
  }
  return {
    sentence: 'Something went wrong in this page. Reload it and try again.',
    detail: undefined,
  };
}
