/** Bearer token extraction (RFC 6750 §2.1): exactly one token in the Authorization header. */
import { BASIC_REALM } from '../errors.js';
import { tokenRefused } from './token-refusals.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** The header names the Bearer scheme (RFC 9110 §11.4: the scheme, then a space or nothing). */
const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i;

/**
 * The challenge to a request that carried no bearer credentials — no
 * Authorization header, or one of another scheme (Basic …): RFC 6750 §3.1
 * gives it no error code, only the realm (the gateway's one protection
 * space, the realm Basic names too). A bearer that fails keeps the
 * `invalid_token` challenge the error type adds.
 */
const NO_CREDENTIALS = {
  headers: Object.freeze({ 'www-authenticate': `Bearer realm="${BASIC_REALM}"` }),
};

/** @throws GatewayError `invalid_token` */
export function parseBearerAuthorization(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw tokenRefused('missing', 'A bearer token is required.', NO_CREDENTIALS);
  }
  const match = BEARER.exec(header);
  if (match === null) {
    throw tokenRefused(
      'not_bearer',
      'The Authorization header is not a bearer token.',
      BEARER_SCHEME.test(header) ? {} : NO_CREDENTIALS,
    );
  }
  return match[1] as string;
}
