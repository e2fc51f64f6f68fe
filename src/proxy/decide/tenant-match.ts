/**
 * Tenant matching: a route may say where a request names
 * its tenant — header, path pattern, query parameter, host pattern. Every place
 * that is present must equal the token's tenant. A place that names two
 * tenants (a repeated header or query parameter) is a mismatch, not a pick.
 *
 * Each place is read the way a permissive upstream would read it:
 * path literals in any letter case and without `;params`; the tenant segment
 * with and without its `;params`; query names in any case, with array and
 * object suffixes (`tenant_id[]`, `tenant_id.x`), PHP's name mangling and `;`
 * as a separator; every host the request may be addressed to (each Host line,
 * each `X-Forwarded-Host` entry, `Forwarded: host=`), ports and trailing dots
 * aside. If any reading names a tenant, it must be spelled exactly as the
 * token's. A host no parser can agree on is `invalid_request`.
 */
import type { RouteConfig } from '../../config/index.js';
import { GatewayError } from '../../errors.js';
import { foldHeaderName } from '../../header-names.js';
import { trimOws } from './optional-whitespace.js';
import { hostnameOf } from './host-name.js';
import { decodeSegment, foldCase, lenientPath, lenientSegment } from './normalise-path.js';

type TenantRules = NonNullable<RouteConfig['tenant']>;

/** What tenant matching looks at: the request as the upstream may read it. */
export interface RequestView {
  /** Every value of the header, counting every spelling folded into `foldedName`. */
  headerValues(foldedName: string): string[];
  /**
   * Every host the request may be read as addressed to, as sent: the Host
   * line, each `X-Forwarded-Host` entry, each `Forwarded` `host=`, and any
   * the caller adds (forward-auth's `X-Original-URL`).
   * @throws GatewayError `invalid_request` for a repeated Host line (RFC 9112 §3.2)
   */
  hosts(): readonly string[];
  /** Normalised path. */
  readonly path: string;
  /** The raw query string without `?`, or ''. */
  readonly query: string;
}

/**
 * A view that reads only what a route's rules look at: most routes never
 * read the query or the hosts, so the hot path never parses them.
 */
export function requestView(
  rawHeaders: readonly string[],
  path: string,
  query: string,
  extraHosts: readonly string[] = [],
): RequestView {
  return new LazyRequestView(rawHeaders, path, query, extraHosts);
}

class LazyRequestView implements RequestView {
  #hosts: string[] | undefined;

  constructor(
    private readonly rawHeaders: readonly string[],
    readonly path: string,
    readonly query: string,
    private readonly extraHosts: readonly string[],
  ) {}

  hosts(): readonly string[] {
    if (this.#hosts !== undefined) return this.#hosts;
    const hosts: string[] = [];
    const raw = this.rawHeaders;
    let hostLines = 0;
    for (let i = 0; i < raw.length; i += 2) {
      const name = (raw[i] as string).toLowerCase();
      const value = raw[i + 1] as string;
      if (name === 'host') {
        hostLines++;
        hosts.push(value);
      } else if (name === 'x-forwarded-host') {
        for (const entry of value.split(',')) if (entry.trim() !== '') hosts.push(entry);
      } else if (name === 'forwarded') {
        hosts.push(...forwardedHosts(value));
      }
    }
    if (hostLines > 1) throw new GatewayError('invalid_request', 'The request has two Host lines.');
    return (this.#hosts = [...hosts, ...this.extraHosts]);
  }

  headerValues(foldedName: string): string[] {
    // The raw list, not Node's header maps: it keeps every repeated line, and
    // costs no allocation for the headers that do not match.
    const raw = this.rawHeaders;
    const values: string[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i] as string;
      if (name.length !== foldedName.length) continue;
      if (name === foldedName || foldHeaderName(name) === foldedName)
        values.push(raw[i + 1] as string);
    }
    return values;
  }
}

/** `host=` of every element of a `Forwarded` header (RFC 7239 §4), unquoted. */
function forwardedHosts(value: string): string[] {
  const hosts: string[] = [];
  for (const element of value.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'host') continue;
      const host = trimOws(pair.slice(eq + 1));
      hosts.push(/^".*"$/.test(host) ? host.slice(1, -1).replace(/\\(.)/g, '$1') : host);
    }
  }
  return hosts;
}

/**
 * One place a route reads: returns when no reading of the request names a
 * tenant other than `tenantId`.
 * @throws GatewayError `tenant_mismatch`, or `invalid_request` for a host no parser agrees on
 */
type TenantPlace = (view: RequestView, tenantId: string) => void;

/** Checks a request against a route's rules. @throws GatewayError `tenant_mismatch` */
export type TenantRule = (view: RequestView, tenantId: string) => void;

export function compileTenantRules(rules: TenantRules | undefined): TenantRule {
  const places: TenantPlace[] = [];
  if (rules?.header !== undefined) places.push(fromHeader(rules.header.toLowerCase()));
  if (rules?.path !== undefined) places.push(fromPath(rules.path));
  if (rules?.query !== undefined) places.push(fromQuery(rules.query));
  if (rules?.host !== undefined) places.push(fromHost(rules.host));
  return (view, tenantId) => {
    for (const place of places) place(view, tenantId);
  };
}

/** @param named the tenant the request named, for the log (client input, as read) */
function mismatch(named: string | undefined): GatewayError {
  return new GatewayError('tenant_mismatch', "The request names a tenant other than the token's.", {
    detail: named,
  });
}

/** A reading names `named`: it must be the token's tenant, spelled the same. */
function expectTenant(named: string | undefined, tenantId: string): void {
  if (named !== tenantId) throw mismatch(named);
}

/**
 * Counts every spelling an upstream framework may fold into the same name
 * (`X_Tenant_Id` for `X-Tenant-Id`), so a second spelling cannot smuggle in a
 * second tenant.
 */
function fromHeader(name: string): TenantPlace {
  const wanted = foldHeaderName(name);
  return (view, tenantId) => {
    const values = view.headerValues(wanted);
    if (values.length === 0) return;
    if (values.length > 1) throw mismatch(values.map(trimOws).join(', '));
    expectTenant(trimOws(values[0] as string), tenantId);
  };
}

/**
 * `/orders/tenants/:tenant_id`: a request whose path runs through that
 * segment names it. Read twice — as normalised, and as a permissive upstream
 * reads it (`lenientPath`: `;params` dropped, empty segments gone) — with the
 * literal segments compared in any letter case. The tenant segment must
 * decode to exactly the id: `acme;v=1` is refused even for acme (Tomcat reads
 * `acme`, Express `acme;v=1`), as is `ACME`.
 */
const AMBIGUOUS_PATH = new GatewayError(
  'invalid_request',
  'The path has a segment some upstreams drop and others keep, before its tenant segment.',
);

function fromPath(pattern: string): TenantPlace {
  const parts = pattern.split('/').filter((p) => p !== '');
  const index = parts.indexOf(':tenant_id');
  /** Folded literals; `undefined` for a `:placeholder`, which matches any segment. */
  const literals = parts
    .slice(0, index)
    .map((p) => (p.startsWith(':') ? undefined : foldCase(lenientSegment(p))));
  /** `segments` runs through the pattern: the tenant segment must be the tenant, spelled the same. */
  /** The segments start with the pattern's literals (the tenant segment may be missing). */
  const startsLike = (segments: string[]): boolean => {
    if (segments.length < index) return false;
    for (let i = 0; i < index; i++) {
      const literal = literals[i];
      if (literal !== undefined && foldCase(lenientSegment(segments[i] as string)) !== literal)
        return false;
    }
    return true;
  };
  const check = (segments: string[], tenantId: string): void => {
    if (segments.length <= index || !startsLike(segments)) return;
    // Tenant ids are `[a-z0-9_-]` (src/auth/accounts.ts): a segment that
    // decodes to exactly the id reads as the id however it is trimmed.
    expectTenant(decodeSegment(segments[index] as string), tenantId);
  };
  return ({ path }, tenantId) => {
    const segments = path.split('/').filter((s) => s !== '');
    check(segments, tenantId);
    // Aligned as a permissive upstream aligns them: segments that are only
    // `;params` or spaces (`/orders/;x/tenants/…`) are gone.
    if (lenientPath(path) === undefined) return;
    // A segment that some upstreams drop and others keep (only `;params`,
    // dots or spaces: `/;x/`, `/%3B/`, `/.../`) shifts the tenant segment
    // by one in some readings and not in others: which segment names the
    // tenant is then ambiguous, and refused.
    const kept = segments.filter((s) => lenientSegment(s) !== '');
    const droppable = segments.findIndex((s) => lenientSegment(s) === '');
    if (droppable >= 0 && droppable <= index && startsLike(kept)) throw AMBIGUOUS_PATH;
    check(kept, tenantId);
  };
}

/**
 * A query parameter, found under every name a framework may file it under:
 * any letter case, surrounding spaces, `name[]` / `name[0]` / `name[x]`
 * (PHP, Rails, qs), `name.x` (qs `allowDots`), and PHP's mangling of ` `,
 * `.` and `[` into `_`. The query is read with `&` and, where it has one,
 * with `;` as separator too (Python's old `parse_qs`, Perl CGI). Each reading
 * may hold the parameter once, with exactly the token's tenant as value.
 */
function fromQuery(name: string): TenantPlace {
  const wanted = new Set([foldCase(name), phpMangle(foldCase(name))]);
  const matches = (raw: string): boolean => {
    const key = foldCase(raw);
    for (const base of [key, key.split('[', 1)[0] as string, key.split('.', 1)[0] as string]) {
      if (wanted.has(base.trim()) || wanted.has(phpMangle(base))) return true;
    }
    return false;
  };
  const check = (query: string, tenantId: string): void => {
    let found = false;
    for (const [key, value] of new URLSearchParams(query)) {
      if (!matches(key)) continue;
      if (found) throw mismatch(value);
      found = true;
      expectTenant(value, tenantId);
    }
  };
  return ({ query }, tenantId) => {
    if (query === '') return;
    check(query, tenantId);
    if (query.includes(';')) check(query.replace(/;/g, '&'), tenantId);
  };
}

/** PHP's request-variable names: leading spaces dropped, ` `, `.` and `[` become `_`. */
function phpMangle(name: string): string {
  return name.trimStart().replace(/[ .[]/g, '_');
}

/**
 * `:tenant_id.api.example.com` against every host the request may be
 * addressed to (`RequestView.hosts`), in any letter case, port and one
 * trailing dot aside. A host with more labels than the pattern that fits it
 * from either end is read from both ends, and both must be the tenant.
 */
function fromHost(pattern: string): TenantPlace {
  const labels = pattern.toLowerCase().split('.');
  const index = labels.indexOf(':tenant_id');
  const fitsAt = (got: string[], offset: number): boolean => {
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i] as string;
      if (i !== index && !label.startsWith(':') && got[offset + i] !== label) return false;
    }
    return true;
  };
  return (view, tenantId) => {
    for (const host of view.hosts()) {
      const hostname = hostnameOf(host);
      if (hostname === undefined) continue;
      const got = hostname.split('.');
      const extra = got.length - labels.length;
      if (extra < 0) continue;
      if (!fitsAt(got, 0) && !fitsAt(got, extra)) continue;
      // Counted from either end: `x.globex.api.example.com` is globex to a
      // reader that strips the suffix, x to one that takes the first label.
      expectTenant(got[index], tenantId);
      expectTenant(got[extra + index], tenantId);
    }
  };
}
