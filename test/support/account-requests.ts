/**
 * A user's own account requests, as a client sends them: signing up
 * (`POST /1/users`), changing the password (`PUT /1/users/current/password`
 * with Basic of the old one) and refreshing a token (the refresh grant).
 * They return the answer unread.
 */
import { basic } from './gateway.js';
import { tokenRequest } from './token-endpoint.js';

export interface Credentials {
  email: string;
  password: string;
}

/** POST /1/users with `body` (e-mail, password and, when given, name) as JSON. */
export function signUp(url: string, body: Credentials & { name?: string }): Promise<Response> {
  return fetch(`${url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** PUT /1/users/current/password: `who` proves the old password, `password` is the new one. */
export function changePassword(url: string, who: Credentials, password: string): Promise<Response> {
  return fetch(`${url}/1/users/current/password`, {
    method: 'PUT',
    headers: { authorization: basic(who.email, who.password), 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
}

/** POST /1/oauth/token with `grant_type=refresh_token` (form-encoded); `signal` bounds the wait. */
export function refreshAt(
  url: string,
  refreshToken: string,
  signal?: AbortSignal,
): Promise<Response> {
  return tokenRequest(url, { grant_type: 'refresh_token', refresh_token: refreshToken }, signal);
}
