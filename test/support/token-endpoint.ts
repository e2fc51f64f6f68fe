/**
 * A form-encoded `POST /1/oauth/token` (RFC 6749 §4), as an OAuth client
 * sends one: the grants' requests in the suites are built on it.
 */

/** `fields` form-encoded to the token endpoint; `signal` bounds the wait. */
export function tokenRequest(
  url: string,
  fields: Record<string, string>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    ...(signal === undefined ? {} : { signal }),
  });
}
