/**
 * The header names the gateway sets on every forwarded request, made known
 * to undici as it knows `content-type` or `user-agent`.
 *
 * undici checks each header of each request it sends (`processHeader` in
 * `lib/core/request.js`): a name found in its table of well-known names
 * (`headerNameLowerCasedRecord`) is taken as it is; any other is lower-cased
 * and, not found again, checked as a token — by a regular expression for 12
 * characters or more. The gateway adds nine such names to every request
 * (`X-Tenant-Id`, `X-Request-Id`, `X-Forwarded-*`…), always the same ones:
 * checked once here, they cost ~0.4k instructions a name less on every
 * request (issue 35, `npm run bench:instructions`).
 *
 * The table maps a name to its lower-case spelling; only lower-case names
 * that are valid tokens (RFC 9110 §5.1) are added, each mapped to itself, so
 * what undici sends and refuses is unchanged. The table is not a public API:
 * if an undici release moves or changes it, nothing is added (the names are
 * then checked per request, as before) — `test/proxy/undici-header-names.test.ts`
 * fails, so the upgrade says so.
 */
import { createRequire } from 'node:module';

/** RFC 9110 §5.6.2 `token`, lower-case only (how the gateway writes the names it sets). */
const LOWER_TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** A reload may bring new identity header names: the table stays small whatever happens. */
const MAX_ADDED = 64;

type NameTable = Record<string, string | undefined>;

let table: NameTable | undefined | null;
let added = 0;

/** undici's table of well-known header names, or `undefined` when this undici has none. */
export function undiciNameTable(): NameTable | undefined {
  if (table === undefined) table = loadTable();
  return table ?? undefined;
}

function loadTable(): NameTable | null {
  try {
    const constants = createRequire(import.meta.url)('undici/lib/core/constants.js') as {
      headerNameLowerCasedRecord?: unknown;
    };
    const record = constants.headerNameLowerCasedRecord;
    return typeof record === 'object' &&
      record !== null &&
      (record as NameTable)['content-type'] === 'content-type'
      ? (record as NameTable)
      : null;
  } catch {
    return null;
  }
}

/**
 * Makes `names` known to undici; returns how many it added. Names that are
 * not lower-case tokens are left to undici's own check on every request.
 */
export function knowHeaderNames(names: Iterable<string>): number {
  const known = undiciNameTable();
  if (known === undefined) return 0;
  let now = 0;
  for (const name of names) {
    if (added >= MAX_ADDED) break;
    if (!LOWER_TOKEN.test(name) || known[name] !== undefined) continue;
    known[name] = name;
    added++;
    now++;
  }
  return now;
}
