/**
 * Where a company sign-in returns the browser (issue 44): a path on the
 * gateway's own origin, as the sign-in page's `return_to` (whose full rule,
 * with `sessions.returnHosts`, is `api/sign-in/return-to.ts`'s; this is the
 * strict subset the IdP sign-in needs until the two are one). Anything else
 * becomes `/`: never a redirect to another host.
 */

/** A sane bound: a path longer than this is no page of an app. */
const MAX_RETURN_TO_LENGTH = 2048;

/**
 * `raw` when it is a path: one leading `/`, not `//` or `/\` (a browser reads
 * both as another host), no backslash, no control character or space
 * (browsers strip some, turning a harmless-looking value into `//host`);
 * else `/`.
 */
export function ssoReturnTo(raw: string | undefined): string {
  if (raw === undefined || raw.length > MAX_RETURN_TO_LENGTH) return '/';
  if (!raw.startsWith('/') || raw.startsWith('//')) return '/';
  if (/[\\\u0000-\u0020\u007f-\u009f]/.test(raw)) return '/';
  return raw;
}
