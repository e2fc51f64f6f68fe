/**
 * Where a browser goes after signing in or out (`return_to`): the one rule,
 * so that the sign-in page can never be made an open redirector (OWASP
 * "Unvalidated Redirects and Forwards"). Anything the rule does not accept
 * becomes `/`: the person still lands on this host, never elsewhere, and is
 * never refused for it.
 *
 * Accepted:
 * - a path on this host: exactly one leading `/` (not `//`, not `/\`, which
 *   browsers read as another host), no backslash, no control character or
 *   space, at most 2048 characters; the same again after percent-decoding
 *   (`/%2F%2Fevil`, `/%5Cevil`, `/%0d%0a…` are refused);
 * - an absolute `https:` URL (`http:` too when `sessions.cookie.secure` is
 *   false) without userinfo whose host, lower-cased, with its port unless it
 *   is the scheme's default, is one of `sessions.returnHosts`.
 */

/** What the rule reads from the config (`sessions`). */
export interface ReturnToRule {
  /** `secure`: false admits `http:` URLs too. */
  cookie: { secure: boolean };
  returnHosts: readonly string[];
}

/** Where a refused `return_to` leads: this host's root. */
export const HOME = '/';
const MAX_LENGTH = 2048;
/** C0 controls, space, DEL, and the C1 controls and Unicode spaces a browser may strip or fold. */
const UNSAFE = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff\\]/;
/** Decoding rounds before a still-encoded value is given up on (`%25252F`). */
const MAX_DECODES = 3;

/** `raw` when the rule accepts it (an absolute URL normalised), else {@link HOME}. */
export function safeReturnTo(raw: string | undefined, rule: ReturnToRule): string {
  if (raw === undefined || raw === '' || raw.length > MAX_LENGTH || UNSAFE.test(raw)) return HOME;
  if (raw.startsWith('/')) return isLocalPath(raw) ? raw : HOME;
  return allowedUrl(raw, rule) ?? HOME;
}

function isLocalPath(raw: string): boolean {
  let text = raw;
  for (let round = 0; round <= MAX_DECODES; round++) {
    if (!text.startsWith('/') || text.startsWith('//') || UNSAFE.test(text)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return false;
    }
    if (decoded === text) return true;
    text = decoded;
  }
  return false;
}

function allowedUrl(raw: string, rule: ReturnToRule): string | undefined {
  const scheme = /^(https?):\/\/[^/?#@]+(?:[/?#]|$)/i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined || (scheme === 'http' && rule.cookie.secure)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '') return undefined;
  const host = url.host.toLowerCase();
  const allowed = rule.returnHosts.some((entry) => hostOf(scheme, entry) === host);
  return allowed ? url.href : undefined;
}

/** A `returnHosts` entry as `URL.host` writes it for `scheme` (default port dropped). */
function hostOf(scheme: string, entry: string): string | undefined {
  try {
    const url = new URL(`${scheme}://${entry}`);
    return url.username === '' && url.pathname === '/' ? url.host.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}
