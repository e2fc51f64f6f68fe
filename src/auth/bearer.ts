/** Bearer token extraction (RFC 6750 §2.1): exactly one token in the Authorization header. */
import { GatewayError } from '../errors.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** @throws GatewayError `invalid_token` */
export function parseBearerAuthorization(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new GatewayError('invalid_token', 'A bearer token is required.');
  }
  const match = BEARER.exec(header);
  if (match === null) {
    throw new GatewayError('invalid_token', 'The Authorization header is not a bearer token.');
  }
  return match[1] as string;
}
