/**
 * Where a bearer token is due (RFC 6750): the token of the request's
 * credential ({@link readTokenCredential}), or the refusal.
 */
import { BASIC_REALM } from '../../errors.js';
import type { TokenCredential } from './read-credential.js';
import { tokenRefused } from '../tokens/token-refusals.js';

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

/** @throws GatewayError `invalid_token`: `missing` for none, `not_bearer` for another scheme */
export function dueBearerToken(credential: TokenCredential): string {
  switch (credential.kind) {
    case 'bearer':
      return credential.token;
    case 'none':
      throw tokenRefused('missing', 'A bearer token is required.', NO_CREDENTIALS);
    case 'other':
      throw tokenRefused(
        'not_bearer',
        'The Authorization header is not a bearer token.',
        NO_CREDENTIALS,
      );
  }
}
