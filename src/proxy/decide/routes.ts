/** Routes from config, compiled once: prefix table, tenant rules and scopes. */
import { readFileSync } from 'node:fs';
import type { RouteConfig } from '../../config/index.js';
import { GatewayError } from '../../errors.js';
import { compileCors, type Cors } from './cors.js';
import type { TenantType } from '../../store/index.js';
import { hostnameOf } from './host-name.js';
import { compileRateLimit, type RouteRateLimit } from '../rate-limits/rate-policy.js';
import { compileRouteScopes, type RouteScopes } from './route-scopes.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import type { UpstreamTls } from '../forward/upstream-pools.js';
import { compileTenantRules, type TenantRule } from './tenant-match.js';

export interface CompiledRoute {
  prefix: string;
  /**
   * The route in metrics and logs: its prefix, behind its hosts when it names
   * some (`api.example.com,*.example.com/orders`), so routes on different
   * hosts with one prefix stay apart.
   */
  label: string;
  /** The hosts it serves (see `route-table.ts`); undefined: any. */
  hosts: readonly string[] | undefined;
  /** Undefined: a forward-auth-only route (an ingress proxies; the gateway only verifies). */
  upstream: string | undefined;
  timeoutMs: number;
  /** The longest silence within the upstream's response body; 0: none. */
  bodyIdleTimeoutMs: number;
  stripAuthorization: boolean;
  /**
   * `none`: public (see {@link anonymousAllowed}); `session`: the session
   * cookie admits too (`auth/credentials/session-credentials.ts`).
   */
  auth: 'bearer' | 'session' | 'none';
  /** `grpc`: forwarded over HTTP/2, refused in gRPC's shape, scopes keyed by gRPC method (the path). */
  protocol: 'http1' | 'grpc';
  /** @throws GatewayError `tenant_mismatch` */
  checkTenant: TenantRule;
  /** The tenant types this route admits; undefined: any. */
  tenantTypes: ReadonlySet<TenantType> | undefined;
  /** The scopes a token needs, per method; undefined: none. */
  scopes: RouteScopes | undefined;
  /** Token buckets per tenant and per user; undefined: unlimited. */
  rateLimit: RouteRateLimit | undefined;
  /** The route's CORS policy; undefined: CORS is the upstream's business. */
  cors: Cors | undefined;
  /** TLS to an https upstream (files read), or undefined: Node's defaults. */
  tls: UpstreamTls | undefined;
  /**
   * What replaces the route's prefix in the path the upstream sees: `''`
   * (stripPrefix), a prefix (rewrite), or undefined (the path as it is).
   */
  replacePrefix: string | undefined;
  /** The gateway's own cookies, lower-cased: an upstream's `Set-Cookie` never sets one. */
  reservedCookies: ReadonlySet<string> | undefined;
}

/** A route the gateway itself forwards to. */
export type ProxiedRoute = CompiledRoute & { upstream: string };

/**
 * The route as a proxy target.
 * @throws GatewayError `not_found` for a forward-auth-only route: requests for
 *   it belong to the ingress in front, which asks `/auth/verify`.
 */
export function proxiedRoute(route: CompiledRoute): ProxiedRoute {
  if (route.upstream === undefined) {
    throw new GatewayError(
      'not_found',
      'This route is checked by forward-auth only (no upstream is configured for it).',
    );
  }
  return route as ProxiedRoute;
}

/**
 * @param reservedCookies the gateway's own cookies (lower-cased names): an
 *   upstream's `Set-Cookie` naming one never reaches the client (`response-headers.ts`)
 */
export function compileRoutes(
  routes: readonly RouteConfig[],
  reservedCookies?: ReadonlySet<string>,
): RouteTable<CompiledRoute> {
  return createRouteTable(
    routes.map((r) => {
      const label = r.hosts === undefined ? r.prefix : `${r.hosts.join(',')}${r.prefix}`;
      return {
        prefix: r.prefix,
        label,
        hosts: r.hosts,
        upstream: r.upstream,
        timeoutMs: r.timeoutMs,
        bodyIdleTimeoutMs: r.bodyIdleTimeoutMs,
        stripAuthorization: r.stripAuthorization,
        auth: r.auth,
        protocol: r.protocol,
        checkTenant: compileTenantRules(r.tenant),
        tenantTypes: r.tenantTypes === undefined ? undefined : new Set(r.tenantTypes),
        scopes: compileRouteScopes(r.scopes),
        replacePrefix: r.stripPrefix ? '' : r.rewrite?.prefix.replace(/\/+$/, ''),
        tls: r.tls === undefined ? undefined : upstreamTls(r.tls),
        cors: r.cors === undefined ? undefined : compileCors(r.cors),
        rateLimit: compileRateLimit(label, r.rateLimit),
        reservedCookies,
      };
    }),
  );
}

/** The hosts of a request to a table whose routes name none, or of a request that names none. */
export const ANY_HOST: readonly (string | undefined)[] = [undefined];

/**
 * The hostnames of Host-like values, each once (see `hostnameOf`); none: `ANY_HOST`.
 * @throws GatewayError `invalid_request` for a malformed one
 */
export function hostnamesOf(values: readonly string[]): readonly (string | undefined)[] {
  const names = new Set(values.map(hostnameOf));
  return names.size === 0 ? ANY_HOST : [...names];
}

const HOSTS_DISAGREE = new GatewayError(
  'invalid_request',
  'The hosts this request is addressed to select different routes.',
);

/**
 * The route a request for `path` is forwarded under. A request may be
 * addressed to several hosts (Host and a trusted proxy's X-Forwarded-Host;
 * forward-auth's sources): each must select the same route, or an upstream
 * that believes another would serve it under rules nobody checked.
 * @throws GatewayError `invalid_request` when they do not
 */
export function routeOf(
  routes: RouteTable<CompiledRoute>,
  path: string,
  hosts: readonly (string | undefined)[],
): CompiledRoute | undefined {
  const route = routes.match(path, hosts[0]);
  for (let i = 1; i < hosts.length; i++) {
    if (routes.match(path, hosts[i]) !== route) throw HOSTS_DISAGREE;
  }
  return route;
}

/**
 * The path the upstream sees for a normalised `path` under `route`: the
 * route's prefix replaced as configured. Tenant rules and the route match
 * read the public path; only the forwarded one changes. Cut at the prefix's
 * segment boundary (the route matched there), so nothing outside the
 * replacement prefix can be reached: the normalised path has no dot segments
 * or encoded slashes left.
 */
export function upstreamPathOf(route: CompiledRoute, path: string): string {
  if (route.replacePrefix === undefined) return path;
  const prefix = route.prefix.replace(/\/+$/, '');
  const rest = path.slice(prefix.length);
  const rewritten = route.replacePrefix + rest;
  return rewritten === '' ? '/' : rewritten.startsWith('/') ? rewritten : `/${rewritten}`;
}

/** Reads the route's TLS files (their paths were checked readable when the config loaded). */
function upstreamTls(tls: NonNullable<RouteConfig['tls']>): UpstreamTls {
  return {
    key: JSON.stringify(tls),
    connect: {
      ...(tls.ca === undefined ? {} : { ca: readFileSync(tls.ca) }),
      ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
      ...(tls.cert === undefined ? {} : { cert: readFileSync(tls.cert) }),
      ...(tls.key === undefined ? {} : { key: readFileSync(tls.key) }),
      rejectUnauthorized: !tls.insecureSkipVerify,
    },
  };
}
