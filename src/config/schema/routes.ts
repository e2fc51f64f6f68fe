/**
 * The routes the gateway proxies, and their rules: each route's own (a
 * prefix the gateway does not serve itself, what needs an upstream, TLS only
 * to `https://`, `stripPrefix` or `rewrite`), one route per prefix and host
 * across the list, and no route the operations endpoints would shadow on
 * `listen` (that one reads `listen` too: the composition calls it); the
 * scopes a route requires per method, each one some role or machine client
 * can be given (that one reads `authorization`: the composition calls it).
 */
import { z } from 'zod';
import { PROBE_PATHS } from '../ops-paths.js';
import { scopeName } from './authorization.js';
import { corsPolicy } from './cors.js';
import { rateLimit } from './limits.js';
import { boolean, headerName, httpUrl, integer } from './values.js';

/** A path prefix as written in config: no dot segments, encodings or backslashes. */
const plainPath = () =>
  z
    .string()
    .startsWith('/', 'must start with /')
    .refine((p) => !/\/\/|\/\.\.?(\/|$)|%|\\/.test(p), 'must be a plain path (no //, .., %, \\)')
    .meta({ typeName: 'path' });

/** A Host value a route serves: a name, or `*.` and a name (one wildcard label); no port. */
const hostPattern = z
  .string()
  .regex(
    /^(?:\*\.)?(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?$/,
    'must be a host name, or *. and a host name (one wildcard label), without a port',
  )
  .transform((host) => host.toLowerCase().replace(/\.$/, ''))
  .meta({ typeName: 'host name' });

/** Where a request names its tenant (`proxy/decide/tenant-match.ts`). */
const tenantRules = z
  .strictObject({
    header: headerName.optional().describe('a request header that names the tenant (`X-Tenant`)'),
    path: z
      .string()
      .startsWith('/', 'must start with /')
      .refine((p) => p.split('/').includes(':tenant_id'), 'must contain the segment :tenant_id')
      .optional()
      .describe('a path pattern with the segment `:tenant_id` (`/orders/:tenant_id`)'),
    query: z
      .string()
      .min(1)
      .optional()
      .describe('a query parameter that names the tenant (`tenant`)'),
    host: z
      .string()
      .refine((h) => h.split('.').includes(':tenant_id'), 'must contain the label :tenant_id')
      .optional()
      .describe('a host pattern with the label `:tenant_id` (`:tenant_id.api.example.com`)'),
  })
  .refine((rules) => Object.values(rules).some((v) => v !== undefined), {
    message: 'must name at least one of header, path, query, host',
  });

/** A key of a route's `scopes`: a method as requests spell it (case-sensitive, RFC 9110 §9.1), or `*`. */
const SCOPE_METHOD = /^(?:[A-Z][A-Z-]*|\*)$/;

/** A key of a gRPC route's `scopes`: a gRPC method as its path (`/pkg.Service/Method`), or `*`. */
const GRPC_SCOPE_METHOD = /^(?:\/[A-Za-z_][\w.]*\/[A-Za-z_]\w*|\*)$/;

/**
 * The scopes a route requires, per method: every scope listed for the
 * request's method (HEAD: GET's, unless HEAD is listed), else `*`'s; a
 * method under neither needs none.
 */
const routeScopes = z
  .record(z.string(), z.array(scopeName))
  .superRefine((methods, ctx) => {
    const names = Object.keys(methods);
    if (names.length === 0)
      ctx.addIssue({
        code: 'custom',
        message: 'must name at least one method or * (omit the key to require none)',
      });
    for (const name of names.filter((n) => !SCOPE_METHOD.test(n) && !GRPC_SCOPE_METHOD.test(n)))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message:
          'must be an HTTP method in capitals (GET, POST, …), a gRPC method (/pkg.Service/Method) or *',
      });
  })
  .meta({ typeName: 'map: method or `*` → list of scopes' });

/** One route: where it is served, where it goes, and what it asks of a request. */
const route = z
  .strictObject({
    prefix: plainPath().describe(
      'path prefix the route serves, plain (no `..`, `//`, `%`); one route per prefix and host',
    ),
    // Chosen by host, then by prefix: see `proxy/decide/route-table.ts`.
    hosts: z
      .array(hostPattern)
      .min(1, 'must name at least one host (omit the key to serve any host)')
      .optional()
      .describe(
        'the route serves only these hosts (`api.example.com`, `*.example.com`: exact, or one wildcard label; no port); routes are chosen by host, then prefix. Omitted: any host',
      ),
    upstream: httpUrl
      .optional()
      .describe(
        '`http(s)://host:port[/base]`; a base path is prepended. Omitted: a forward-auth-only route (its rules apply on `/auth/verify`; the gateway never proxies it: 404)',
      ),
    timeoutMs: integer(1, 3_600_000)
      .default(30_000)
      .describe(
        "time to the upstream's response head, the wait for a connection included, before 504; pushed back while the request body is still moving",
      ),
    // Long enough for streams and long polls that send a heartbeat.
    bodyIdleTimeoutMs: integer(0, 86_400_000)
      .default(300_000)
      .describe(
        "the longest silence within the upstream's response body; past it the transfer is cut (outcome `failed`, reason `upstream_broke`); `0`: none",
      ),
    tenant: tenantRules
      .optional()
      .describe(
        'where a request names its tenant: at least one of `header`, `path`, `query`, `host` when `tenant` is given',
      ),
    protocol: z
      .enum(['http1', 'grpc'])
      .default('http1')
      .describe(
        "`grpc`: a gRPC service — forwarded over HTTP/2 (h2c to `http://`, h2 to `https://`), its refusals in gRPC's shape, `scopes` keyed by gRPC method; needs `listen.http2` ([gRPC](grpc.md))",
      ),
    auth: z
      .enum(['bearer', 'session', 'none'])
      .default('bearer')
      .describe(
        '`session`: a browser app — the session cookie admits like a bearer token (a bearer token or API key still works, and wins when both are sent); a page load without a session is sent to `/1/sign-in`, anything else gets 401; an unsafe method with the cookie must come from the same origin (else 403 `csrf_refused`); needs `sessions.enabled` ([Browser sessions](browser-sessions.md)). `none`: a public route — no token needed, identity headers still stripped; a valid bearer token or API key sent anyway is honoured (identity set, tenant rules applied), an invalid one gets 401; another scheme (`Basic` for the upstream) passes through. Public paths inside a protected prefix: a route of their own, with the longer prefix',
      ),
    // As Envoy's `jwt_authn` does by default: the upstream never sees a replayable token it might log.
    stripAuthorization: boolean()
      .default(true)
      .describe(
        'remove `Authorization` before forwarding, so the upstream sees only the identity headers; `false` for an upstream that verifies the token itself',
      ),
    tls: z
      .strictObject({
        ca: z
          .string()
          .min(1)
          .optional()
          .describe("PEM file of the CA that signed the upstream (default: the system's)"),
        serverName: z.string().min(1).optional().describe('the name checked and sent as SNI'),
        cert: z
          .string()
          .min(1)
          .optional()
          .describe('PEM file of a client certificate (mTLS); goes with `key`'),
        key: z
          .string()
          .min(1)
          .optional()
          .describe("PEM file of the client certificate's private key; goes with `cert`"),
        insecureSkipVerify: boolean()
          .default(false)
          .describe("no verification of the upstream's certificate at all (warned at start)"),
      })
      .refine((t) => (t.cert === undefined) === (t.key === undefined), {
        message: 'cert and key go together (a client certificate needs both)',
      })
      .optional()
      .describe(
        'TLS to an `https://` upstream; files relative to the config file, read at start and reload',
      ),
    stripPrefix: boolean()
      .default(false)
      .describe(
        "the upstream sees the path without the route's prefix (`/catalog/items?x=1` → `/items?x=1`); not with `rewrite`. Tenant rules read the public path",
      ),
    rewrite: z
      .strictObject({
        prefix: plainPath().describe(
          "the upstream sees the path with this prefix instead of the route's (`/catalog/items` → `/v2/items`); not with `stripPrefix`",
        ),
      })
      .optional()
      .describe('what the upstream sees instead of the public prefix'),
    cors: corsPolicy
      .optional()
      .describe(
        "CORS for browser apps calling this route: the gateway answers preflights itself, before authentication, and sets the CORS headers on every answer of the route, its own 401/403/5xx included; the upstream's `Access-Control-*` headers are dropped. Needs an `upstream`. Omitted: the upstream's own (preflights then need a token)",
      ),
    tenantTypes: z
      .array(z.enum(['orgtenant', 'usertenant']))
      .min(1, 'must name at least one tenant type (omit the key to admit any)')
      .optional()
      .describe(
        'only tokens for these tenant types pass (others: 403 `forbidden`, on proxy, forward-auth and WebSocket upgrades); omitted: any',
      ),
    rateLimit: rateLimit
      .optional()
      .describe(
        'requests per second per tenant and per user on this route, enforced on proxied requests and WebSocket upgrades (not on `/auth/verify`), shared by every instance on one Redis; see `docs/rate-limits.md`. Omitted: unlimited',
      ),
    scopes: routeScopes
      .optional()
      .describe(
        'scopes a token needs here, per method (`GET: [catalog:read]`; `"*"`: any other; HEAD takes GET\'s unless listed); without them 403 `insufficient_scope`, proxied, upgraded or on `/auth/verify` alike ([Routes and tenants](routes-and-tenants.md#route-scopes)). Omitted: none',
      ),
  })
  // These run even when a key of the route is wrong, so that every problem is
  // reported at once; the value may then be partly invalid, hence the defensive reads.
  .superRefine(checkRoute, { when: () => true });

/** The `routes` key: chosen by host, then by prefix; one route per prefix and host. */
export const routes = z
  .array(route)
  .superRefine(checkDuplicates, { when: () => true })
  .default([])
  .meta({
    description:
      'The routes the gateway proxies (and checks on `/auth/verify`), chosen by host, then by prefix.',
    examples: [
      [
        {
          prefix: '/orders',
          upstream: 'http://orders:9001',
          tenant: { path: '/orders/:tenant_id' },
          stripPrefix: true,
        },
      ],
    ],
  });

/** Paths the gateway serves itself; a route under them could never be reached. */
const RESERVED_PREFIXES = ['/1', '/.well-known', '/auth/verify'];

/** A route's prefix as the route table matches it (trailing slashes trimmed), if it has one. */
function prefixOf(value: unknown): string | undefined {
  const raw = (value as { prefix?: unknown } | null)?.prefix;
  if (typeof raw !== 'string') return undefined;
  return raw.length > 1 ? raw.replace(/\/+$/, '') : raw;
}

/** The rules of one route; they wait while its prefix is missing or not a string (reported already). */
function checkRoute(value: unknown, ctx: z.RefinementCtx): void {
  const prefix = prefixOf(value);
  if (prefix === undefined) return;
  if (RESERVED_PREFIXES.some((p) => prefix === p || prefix.startsWith(`${p}/`))) {
    ctx.addIssue({
      code: 'custom',
      path: ['prefix'],
      message: `is reserved for the gateway's own endpoints (${RESERVED_PREFIXES.join(', ')})`,
    });
  }
  const { stripPrefix, rewrite, tls, upstream, cors, rateLimit, scopes, auth } = value as Record<
    string,
    unknown
  >;
  checkGrpcRoute(value as Record<string, unknown>, ctx);
  if (scopes !== undefined && auth === 'none') {
    ctx.addIssue({
      code: 'custom',
      path: ['scopes'],
      message: 'needs a token: a public route (auth: none) admits requests without one',
    });
  }
  if (rateLimit !== undefined && upstream === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['rateLimit'],
      message:
        'applies where the gateway forwards (a route with an upstream); `/auth/verify` does not count requests',
    });
  }
  if (cors !== undefined && upstream === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['cors'],
      message:
        'applies where the gateway forwards (a route with an upstream); with forward-auth, the ingress answers CORS',
    });
  }
  if (tls !== undefined && typeof upstream === 'string' && !upstream.startsWith('https:')) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: 'applies to an https:// upstream' });
  }
  if (stripPrefix === true && rewrite !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['rewrite'],
      message: 'use either stripPrefix or rewrite, not both',
    });
  }
}

/**
 * A gRPC route's scopes name gRPC methods (an HTTP/1 route's, HTTP methods:
 * each is POST on the wire); a browser's session and CORS do not apply to it.
 */
function checkGrpcRoute(value: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const grpc = value['protocol'] === 'grpc';
  const scopes = value['scopes'];
  if (scopes !== null && typeof scopes === 'object') {
    for (const name of Object.keys(scopes)) {
      if (name === '*' || GRPC_SCOPE_METHOD.test(name) === grpc) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['scopes', name],
        message: grpc
          ? 'a gRPC route names gRPC methods (/pkg.Service/Method) or *'
          : 'names a gRPC method: only a route with protocol: grpc takes those',
      });
    }
  }
  if (!grpc) return;
  for (const key of ['cors', 'auth'] as const) {
    if (value[key] === undefined || (key === 'auth' && value[key] !== 'session')) continue;
    ctx.addIssue({
      code: 'custom',
      path: [key],
      message:
        key === 'cors'
          ? 'does not apply to a gRPC route (gRPC clients send no CORS requests)'
          : 'session does not apply to a gRPC route (bearer or none)',
    });
  }
}

/** One route per prefix and host: a route without hosts serves the rest. */
function checkDuplicates(list: unknown, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  (Array.isArray(list) ? list : []).forEach((value: unknown, i) => {
    const prefix = prefixOf(value);
    if (prefix === undefined) return;
    const hosts = (value as { hosts?: unknown }).hosts;
    const names = Array.isArray(hosts) ? hosts.map((h) => String(h).toLowerCase()) : [''];
    for (const name of new Set(names)) {
      const key = `${name.replace(/\.$/, '')} ${prefix}`;
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, i);
        continue;
      }
      ctx.addIssue({
        code: 'custom',
        path: [i, 'prefix'],
        message:
          name === ''
            ? `duplicates routes[${first}].prefix`
            : `duplicates routes[${first}].prefix for host ${name}`,
      });
      break;
    }
  });
}

/**
 * With `listen.opsEndpoints`, a route with an upstream whose prefix is a
 * probe path is refused: the gateway answers that path itself, before any
 * route. Reads the whole config (`listen`, `routes`), which may be partly invalid.
 */
export function checkOpsShadow(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const opsOnListen = (config['listen'] as { opsEndpoints?: unknown } | undefined)?.opsEndpoints;
  if (opsOnListen !== true || !Array.isArray(config['routes'])) return;
  config['routes'].forEach((value: unknown, i) => {
    const prefix = prefixOf(value);
    if (prefix === undefined || (value as { upstream?: unknown }).upstream === undefined) return;
    if (!shadowedByOps(prefix)) return;
    ctx.addIssue({
      code: 'custom',
      path: ['routes', i, 'prefix'],
      message: `is a path the gateway answers itself with listen.opsEndpoints (${PROBE_PATHS.join(', ')}, in any letter case): the upstream would not see it; serve them on admin instead, or move the route`,
    });
  });
}

/**
 * A route prefix (trailing slashes trimmed) that is one of the probe paths:
 * the dispatcher answers that path before any route. In any letter case,
 * since a case-insensitive upstream reads `/Metrics` as `/metrics`: folded
 * as `foldCase` in `proxy/decide/normalise-path.ts` folds it (`ſ` is `s`), not
 * imported, so that loading a config loads nothing of the proxy.
 */
function shadowedByOps(prefix: string): boolean {
  const folded = prefix
    .normalize('NFKC')
    .toUpperCase()
    .toLowerCase()
    .replace(/\u0307/g, '');
  return PROBE_PATHS.includes(folded);
}

/**
 * With `authorization.clientScopes` set, a scope a route requires must be
 * one some role or some machine client can be given: else no token could
 * ever pass, a typo most likely, refused with its path. Without
 * `clientScopes` a client may be given any scope, so every scope is
 * grantable. Reads the whole config, which may be partly invalid.
 */
export function checkRouteScopesGrantable(
  config: Record<string, unknown>,
  ctx: z.RefinementCtx,
): void {
  const authorization = config['authorization'] as
    { roles?: Record<string, unknown>; clientScopes?: unknown } | undefined;
  const clientScopes = authorization?.clientScopes;
  if (!Array.isArray(clientScopes) || !Array.isArray(config['routes'])) return;
  const grantable = new Set<unknown>(clientScopes);
  for (const granted of Object.values(authorization?.roles ?? {}))
    if (Array.isArray(granted)) for (const scope of granted) grantable.add(scope);
  config['routes'].forEach((value: unknown, i) => {
    const scopes = (value as { scopes?: unknown } | null)?.scopes;
    if (scopes === null || typeof scopes !== 'object') return;
    for (const [method, required] of Object.entries(scopes)) {
      if (!Array.isArray(required)) continue;
      required.forEach((scope: unknown, j) => {
        if (typeof scope !== 'string' || grantable.has(scope)) return;
        ctx.addIssue({
          code: 'custom',
          path: ['routes', i, 'scopes', method, j],
          message: `${scope} is granted by no role (authorization.roles) and no client may hold it (authorization.clientScopes): no token could pass`,
        });
      });
    }
  });
}

/**
 * A route with `auth: session` needs `sessions.enabled`: without it there is
 * no sign-in page and no session cookie, so no browser could ever pass.
 * Reads the whole config (`sessions`, `routes`), which may be partly invalid.
 */
export function checkSessionRoutes(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const enabled = (config['sessions'] as { enabled?: unknown } | undefined)?.enabled;
  if (enabled === true || !Array.isArray(config['routes'])) return;
  config['routes'].forEach((value: unknown, i) => {
    if ((value as { auth?: unknown } | null)?.auth !== 'session') return;
    ctx.addIssue({
      code: 'custom',
      path: ['routes', i, 'auth'],
      message: 'session needs sessions.enabled: true (the sign-in page and the session cookie)',
    });
  });
}
