/**
 * Tenant matching (DESIGN §2 step 2): a route may say where a request names
 * its tenant — header, path pattern, query parameter, host pattern. Every place
 * that is present must equal the token's tenant. A place that names two
 * tenants (a repeated header or query parameter) is a mismatch, not a pick.
 */
import type { RouteConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { foldHeaderName } from './header-names.js';
import { decodeSegment } from './normalise-path.js';

type TenantRules = NonNullable<RouteConfig['tenant']>;

/** What tenant matching looks at: the request as the upstream will read it. */
export interface RequestView {
  /** Every value of the header, counting every spelling folded into `foldedName`. */
  headerValues(foldedName: string): string[];
  /** The Host the client asked for (no port stripping yet). */
  host: string | undefined;
  /** Normalised path. */
  path: string;
  query: URLSearchParams;
}

/**
 * A view that parses only what a route's rules look at: most routes never
 * read the query, so the hot path never builds it.
 */
export function requestView(
  rawHeaders: readonly string[],
  host: string | undefined,
  path: string,
  rawQuery: string,
): RequestView {
  return new LazyRequestView(rawHeaders, host, path, rawQuery);
}

class LazyRequestView implements RequestView {
  #query: URLSearchParams | undefined;

  constructor(
    private readonly rawHeaders: readonly string[],
    readonly host: string | undefined,
    readonly path: string,
    private readonly rawQuery: string,
  ) {}

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery));
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

/**
 * What one place says: the tenant it names, `null` when it names two (a
 * mismatch whatever the token), or `undefined` when the request does not use it.
 */
type TenantPlace = (view: RequestView) => string | null | undefined;

/** Checks a request against a route's rules. @throws GatewayError `tenant_mismatch` */
export type TenantRule = (view: RequestView, tenantId: string) => void;

export function compileTenantRules(rules: TenantRules | undefined): TenantRule {
  const places: TenantPlace[] = [];
  if (rules?.header !== undefined) places.push(fromHeader(rules.header.toLowerCase()));
  if (rules?.path !== undefined) places.push(fromPath(rules.path));
  if (rules?.query !== undefined) places.push(fromQuery(rules.query));
  if (rules?.host !== undefined) places.push(fromHost(rules.host));
  return (view, tenantId) => {
    for (const place of places) {
      const named = place(view);
      if (named !== undefined && named !== tenantId) {
        throw new GatewayError(
          'tenant_mismatch',
          "The request names a tenant other than the token's.",
        );
      }
    }
  };
}

/**
 * Counts every spelling an upstream framework may fold into the same name
 * (`X_Tenant_Id` for `X-Tenant-Id`), so a second spelling cannot smuggle in a
 * second tenant.
 */
function fromHeader(name: string): TenantPlace {
  const wanted = foldHeaderName(name);
  return (view) => {
    const values = view.headerValues(wanted);
    if (values.length === 0) return undefined;
    return values.length === 1 ? (values[0] as string).trim() : null;
  };
}

/** `/orders/tenants/:tenant_id`: a request whose path runs through that segment names it. */
function fromPath(pattern: string): TenantPlace {
  const parts = pattern.split('/').filter((p) => p !== '');
  const index = parts.indexOf(':tenant_id');
  return ({ path }) => {
    const segments = path.split('/').filter((s) => s !== '');
    if (segments.length <= index) return undefined;
    for (let i = 0; i < index; i++) {
      const part = parts[i] as string;
      if (!part.startsWith(':') && decodeSegment(segments[i] as string) !== part) return undefined;
    }
    return decodeSegment(segments[index] as string);
  };
}

function fromQuery(name: string): TenantPlace {
  return ({ query }) => {
    const values = query.getAll(name);
    if (values.length === 0) return undefined;
    return values.length === 1 ? (values[0] as string) : null;
  };
}

/** `:tenant_id.api.example.com` against the Host header (port ignored, any case). */
function fromHost(pattern: string): TenantPlace {
  const labels = pattern.toLowerCase().split('.');
  const index = labels.indexOf(':tenant_id');
  return ({ host }) => {
    if (host === undefined) return undefined;
    const hostname = host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
    const got = hostname.split('.');
    if (got.length !== labels.length) return undefined;
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i] as string;
      if (i !== index && !label.startsWith(':') && got[i] !== label) return undefined;
    }
    return got[index] as string;
  };
}
