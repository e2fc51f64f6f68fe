/**
 * Reading and removing one cookie in `Cookie` request headers (RFC 6265
 * §4.2.1: `name=value` pairs separated by `;` and optional spaces; §5.4: a
 * user agent may send several `Cookie` lines, which Node joins with `; `).
 * Names compare exactly (RFC 6265 names are case-sensitive); a caller that
 * must also catch other spellings of a name (a secret's cookie, removed
 * before forwarding) passes `caseInsensitive`.
 */

/** A `Cookie` header as Node gives it: one string (lines joined with `; `), or absent. */
export type CookieHeader = string | string[] | undefined;

function pairsOf(header: CookieHeader): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join('; ') : header;
  return text.split(';');
}

function nameOf(pair: string): string {
  const eq = pair.indexOf('=');
  return (eq === -1 ? '' : pair.slice(0, eq)).trim();
}

function sameName(a: string, b: string, caseInsensitive: boolean): boolean {
  return caseInsensitive ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * Every value sent under `name`, in order (a value in double quotes loses
 * them, §4.1.1). More than one means a cookie set by another host or path
 * (cookie tossing): a caller that trusts the cookie must refuse, not pick.
 */
export function cookieValues(
  header: CookieHeader,
  name: string,
  caseInsensitive = false,
): string[] {
  const values: string[] = [];
  for (const pair of pairsOf(header)) {
    if (!sameName(nameOf(pair), name, caseInsensitive)) continue;
    const raw = pair.slice(pair.indexOf('=') + 1).trim();
    values.push(
      raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw,
    );
  }
  return values;
}

/**
 * The header without any `name` cookie (other cookies kept, in order, joined
 * with `; `); undefined when none is left. Unchanged (the same value) when
 * it held no such cookie: the common case costs a substring test.
 */
export function withoutCookie(
  header: CookieHeader,
  name: string,
  caseInsensitive = true,
): CookieHeader {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!(caseInsensitive ? text.toLowerCase().includes(name.toLowerCase()) : text.includes(name)))
    return header;
  const kept = pairsOf(text)
    .filter((pair) => !sameName(nameOf(pair), name, caseInsensitive))
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '');
  return kept.length === 0 ? undefined : kept.join('; ');
}
