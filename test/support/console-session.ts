/**
 * A browser session on the console's gateway, as the sign-in page gives it
 * (the cookie to send back), and the console's own API calls with it: the
 * cookie and the Fetch Metadata a same-origin page's `fetch` sends.
 */
import { expect } from 'vitest';
import { cookiePair, signIn } from './sign-in-page.js';

/** `tg_session=…` of `who` signed in on the page for `tenantId`. */
export async function sessionCookieOf(
  base: string,
  who: { email: string; password: string },
  tenantId: string,
): Promise<string> {
  const { res } = await signIn(
    base,
    { email: who.email, password: who.password, tenant_id: tenantId },
    { query: `?return_to=%2Fconsole%2F&tenant_id=${tenantId}` },
  );
  expect(res.status).toBe(303);
  return cookiePair(res, 'tg_session');
}

/** A call of the console's page: same origin, JSON, the session cookie. */
export function consoleCall(
  base: string,
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      cookie,
      accept: 'application/json',
      'sec-fetch-site': 'same-origin',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}
