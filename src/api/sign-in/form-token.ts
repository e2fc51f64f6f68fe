/**
 * Login CSRF (the sign-in form posted from another site, signing the victim
 * in as the attacker): the page sets a pre-session cookie of 32 random bytes
 * (`__Host-tg_signin`, or `tg_signin` with `sessions.cookie.secure: false`;
 * HttpOnly, SameSite=Lax, 10 minutes), and its form carries a token derived
 * from that cookie's value — SHA-256(value ‖ "sign-in-form"), a double submit
 * bound to the cookie. Every instance checks it without the store or a
 * shared key; another site can neither read the cookie nor compute the token.
 * A post needs the cookie (exactly one: a second is a sibling host's),
 * the matching token and the same-origin rule (`http/same-origin.ts`).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SessionsConfig } from '../../config/schema/sessions.js';
import { GatewayError } from '../../errors.js';
import { isSameOrigin } from '../../http/same-origin.js';
import { cookieValues } from '../../text/cookies.js';

/** How long a sign-in page may wait for its post. */
export const PRE_SESSION_SECONDS = 600;
/** 32 bytes, base64url. */
const VALUE = /^[A-Za-z0-9_-]{43}$/;

export function preSessionCookieName(config: SessionsConfig): string {
  return config.cookie.secure ? '__Host-tg_signin' : 'tg_signin';
}

/** A new pre-session cookie's value. */
export function newPreSession(): string {
  return randomBytes(32).toString('base64url');
}

/** The form token of a pre-session cookie's value. */
export function formTokenOf(preSession: string): string {
  return createHash('sha256').update(`${preSession}sign-in-form`).digest('base64url');
}

/** The request's pre-session cookie's value: exactly one, well formed; else undefined. */
export function readPreSession(
  headers: IncomingHttpHeaders,
  config: SessionsConfig,
): string | undefined {
  const values = cookieValues(headers.cookie, preSessionCookieName(config));
  return values.length === 1 && VALUE.test(values[0] as string) ? values[0] : undefined;
}

export function preSessionCookie(config: SessionsConfig, value: string): string {
  return `${preSessionCookieName(config)}=${value}${attributes(config, PRE_SESSION_SECONDS)}`;
}

export function clearedPreSessionCookie(config: SessionsConfig): string {
  return `${preSessionCookieName(config)}=${attributes(config, 0)}`;
}

function attributes(config: SessionsConfig, maxAge: number): string {
  return `; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${config.cookie.secure ? '; Secure' : ''}`;
}

/**
 * The post's pre-session cookie's value, once the login-CSRF rule holds.
 * @param own the origin the request was addressed to
 * @throws GatewayError `csrf_refused`
 */
export function checkSignInPost(
  headers: IncomingHttpHeaders,
  own: string | undefined,
  token: string | undefined,
  config: SessionsConfig,
): string {
  if (!isSameOrigin(headers, own)) throw refused('The form was posted from another site.');
  const preSession = readPreSession(headers, config);
  if (preSession === undefined) throw refused('The sign-in form has expired.');
  const expected = Buffer.from(formTokenOf(preSession));
  const given = Buffer.from(token ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw refused('The sign-in form does not match this browser.');
  return preSession;
}

function refused(description: string): GatewayError {
  return new GatewayError('csrf_refused', description);
}
