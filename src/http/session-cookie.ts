/**
 * The `Set-Cookie` of a browser session (issue 44): written by the sign-in
 * page, the IdP sign-in's callback and the sign-out, always the same way.
 * HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * subrequests or form posts), Path=/ and no Domain (the host that set it
 * only), Secure with the `__Host-` name unless `sessions.cookie.secure` is
 * false (a trial on localhost over plain HTTP).
 */
import { sessionCookieName, type SessionsConfig } from '../config/schema/sessions.js';

function attributes(config: SessionsConfig, maxAgeSeconds: number): string {
  return `; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${config.cookie.secure ? '; Secure' : ''}`;
}

/**
 * Sets the session cookie to `value` for the session's absolute lifetime, or
 * for `maxAgeSeconds`, what is left of it (a session moved to another tenant).
 */
export function sessionCookie(
  config: SessionsConfig,
  value: string,
  maxAgeSeconds = config.absoluteTimeoutSeconds,
): string {
  return `${sessionCookieName(config)}=${value}${attributes(config, maxAgeSeconds)}`;
}

/** Removes the session cookie from the browser. */
export function clearedSessionCookie(config: SessionsConfig): string {
  return `${sessionCookieName(config)}=${attributes(config, 0)}`;
}
