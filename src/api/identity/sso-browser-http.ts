/**
 * What the browser sign-in's endpoints share at the HTTP edge: the cookie that
 * binds a sign-in to the browser that started it, the redirect that leaks
 * nothing by `Referer`, and one query parameter read strictly. Used by the
 * code mode (`sso-routes.ts`) and the session mode (`company-sign-in-route.ts`).
 */
import { createHash } from 'node:crypto';
import type { ApiContext } from '../state.js';
import { noStore } from './callers.js';
import { invalidRequest } from './oauth-form.js';

export const SSO_CALLBACK_PATH = '/1/sso/callback';

/** One cookie per sign-in (two tabs may sign in at once), named by a digest of its state. */
export function bindingCookieName(state: string): string {
  return `tg_sso_${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;
}

/** The browser binding: only sent to the callback, never readable by scripts. */
export function bindingCookie(
  state: string,
  value: string,
  origin: string,
  maxAge: number,
): string {
  const secure = origin.startsWith('https:') ? '; Secure' : '';
  return `${bindingCookieName(state)}=${value}; Path=${SSO_CALLBACK_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

/** A redirect that is never cached and sends no `Referer` (the URLs carry state and codes). */
export function redirect(ctx: ApiContext, location: string, status: 302 | 303 = 302): void {
  noStore(ctx);
  ctx.set('referrer-policy', 'no-referrer');
  ctx.status = status;
  ctx.set('location', location);
  ctx.body = '';
}

/** One query parameter; repeated is refused, and so is a missing required one. */
export function one(ctx: ApiContext, name: string, required = false): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidRequest(`The ${name} parameter is repeated.`);
  if (required && (value === undefined || value === ''))
    throw invalidRequest(`The ${name} parameter is required.`);
  return value;
}
