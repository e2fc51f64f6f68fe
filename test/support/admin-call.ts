/**
 * A request of the tenant admins' API read whole, for suites that check the
 * status, the headers and the JSON of many answers.
 */
import { bearer } from './gateway.js';

export interface AdminAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * `method base+path` as `token` (no credentials when undefined) with `body`
 * as JSON (a string is sent as it is); `body` of the answer is its JSON,
 * undefined when it is empty.
 */
export async function adminCall(
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
): Promise<AdminAnswer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: bearer(token) }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: text === '' ? undefined : JSON.parse(text),
  };
}
