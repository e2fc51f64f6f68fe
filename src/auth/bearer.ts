/** Bearer token extraction (RFC 6750 §2.1): exactly one token in the Authorization header. */
import { tokenRefused } from './token-refusals.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** @throws GatewayError `invalid_token` */
export function parseBearerAuthorization(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw tokenRefused('missing', 'A bearer token is required.');
  }
  const match = BEARER.exec(header);
  if (match === null) {
    throw tokenRefused('not_bearer', 'The Authorization header is not a bearer token.');
  }
  return match[1] as string;
}
