/**
 * HTTP Basic credentials (RFC 7617), parsed strictly: anything malformed is
 * `invalid_credentials`, never a guess at what the client meant.
 */
import { GatewayError } from '../../errors.js';

/**
 * What Basic credentials hold (RFC 7617 §2: user-id and password), named for
 * no one use: a user's e-mail and password, a machine client's id and secret
 * (RFC 6749 §2.3.1). The caller names what they are.
 */
export interface BasicCredentials {
  id: string;
  secret: string;
}

/** Control characters (RFC 5234 CTL), kept out of user-ids and passwords by RFC 7617 §2. */
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A UTF-16 surrogate without its pair: no UTF-8 encoding exists for it. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * True when `password` can come back in Basic credentials exactly as it is:
 * no control characters, and well-formed Unicode (the credentials are
 * decoded as strict UTF-8). Signup and password change apply it, so that a
 * password is never accepted that no login could ever present.
 */
export function basicCanCarryPassword(password: string): boolean {
  return !CONTROL.test(password) && !LONE_SURROGATE.test(password);
}

/**
 * True when `userId` can come back as the user-id of Basic credentials: a
 * password as above, without a colon (the first colon ends the user-id,
 * RFC 7617 §2), and not blank.
 */
export function basicCanCarryUserId(userId: string): boolean {
  return basicCanCarryPassword(userId) && !userId.includes(':') && userId.trim() !== '';
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** @throws GatewayError `invalid_credentials` */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials {
  if (header === undefined || header === '') {
    throw refuse('Basic credentials are required.');
  }
  const match = /^Basic +(\S+) *$/i.exec(header);
  if (match === null) throw refuse('The Authorization header is not Basic credentials.');
  const encoded = match[1] as string;
  if (!BASE64.test(encoded)) throw refuse('The Basic credentials are not valid base64.');
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    throw refuse('The Basic credentials are not valid UTF-8.');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw refuse('The Basic credentials have no colon between user and password.');
  const id = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  if (id.trim() === '') throw refuse('The Basic credentials name no user.');
  // Control characters are never part of a user-id or password (RFC 7617 §2).
  if (CONTROL.test(decoded)) {
    throw refuse('The Basic credentials contain control characters.');
  }
  return { id, secret };
}

function refuse(description: string): GatewayError {
  return new GatewayError('invalid_credentials', description);
}
