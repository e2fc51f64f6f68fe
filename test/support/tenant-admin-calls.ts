/**
 * Calls of a tenant admin's endpoints (members, invitations, clients …) by
 * bearer token or by the browser session's cookie, as the accounts suites
 * make them: JSON in, the answer's status and parsed body out.
 */
import { bearer } from './gateway.js';

/** A caller: a bearer token, or a session cookie (`tg_session=…`) with the Fetch Metadata a browser sends. */
export type Caller = { token: string } | { cookie: string; site?: string };

export interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  res: Response;
}

/** `method path` as `caller`, with `body` as JSON when given. */
export async function adminCall(
  base: string,
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> =
    'token' in caller
      ? { authorization: bearer(caller.token) }
      : { cookie: caller.cookie, 'sec-fetch-site': caller.site ?? 'same-origin' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.clone().text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text), res };
}
