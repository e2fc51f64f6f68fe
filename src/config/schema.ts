/**
 * The configuration schema (DESIGN §3): types, defaults and validation in one
 * declaration. Every object is strict: an unknown key is an error, reported
 * with the nearest known key (see `load.ts`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { foldHeaderName, headerNameMatcher, IDENTITY_LIKE_HEADERS } from '../proxy/header-names.js';

/** Accepts numbers, and strings of digits (values that came from `${ENV}`). */
const integer = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
    z.number().int().min(min).max(max),
  );

const boolean = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

const port = () => integer(0, 65535);

const hostName = () => z.string().min(1, 'must not be empty');

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

const redisUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'redis:' || url.protocol === 'rediss:';
  } catch {
    return false;
  }
}, 'must be a redis:// or rediss:// URL');

const cidr = z.string().refine((value) => {
  const [address, bits, ...rest] = value.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d+$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
}, 'must be an IP address or CIDR block (10.0.0.0/8, fd00::/8)');

/** An HTTP header name (RFC 9110 token). */
const headerName = z
  .string()
  .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'must be an HTTP header name');

const listen = z.strictObject({
  host: hostName().default('0.0.0.0'),
  port: port().default(8080),
});

const admin = z.strictObject({
  host: hostName().default('0.0.0.0'),
  port: port().default(9090),
  /** `POST /config/reload` on the admin listener (issue: operations). */
  configReload: boolean().default(false),
});

/**
 * A listener of its own for forward-auth (`/auth/verify`, issue 21): then the
 * main listener no longer serves it, and a NetworkPolicy can let only the
 * ingress controller reach this port.
 */
const forwardAuth = z.strictObject({
  host: hostName().default('0.0.0.0'),
  port: port().default(8081),
});

/** `host:port`, a bracketed IPv6 address allowed (`[fd00::1]:6379`). */
const hostPort = z.string().refine((value) => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
  return match !== null && Number(match[2]) > 0 && Number(match[2]) <= 65535;
}, 'must be host:port (10.0.0.5:26379, [fd00::1]:6379)');

const redisNodes = z.array(hostPort).min(1, 'must name at least one node');

/**
 * Where the store's Redis is: exactly one of `url`, `sentinel`, `cluster`
 * (DESIGN §3, issue 14), through ioredis's own clients for each.
 */
const redis = z
  .strictObject({
    url: redisUrl.optional(),
    sentinel: z
      .strictObject({
        /** The master group's name, as the sentinels know it. */
        name: z.string().min(1),
        nodes: redisNodes,
        /** Password of the Redis nodes (or set `store.redis.password`; not both). */
        password: z.string().min(1).optional(),
        /** Password of the sentinels themselves, when they require one. */
        sentinelPassword: z.string().min(1).optional(),
      })
      .optional(),
    cluster: z.strictObject({ nodes: redisNodes }).optional(),
    /** ACL user and password for the Redis nodes (a URL may carry them instead). */
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    /** TLS to Redis: a `rediss://` URL, or Sentinel/Cluster with this set. `ca` is a PEM file. */
    tls: z
      .strictObject({
        ca: z.string().min(1).optional(),
        servername: z.string().min(1).optional(),
      })
      .optional(),
    keyPrefix: z.string().min(1).max(64).default('tg:'),
    commandTimeoutMs: integer(50, 60_000).default(1000),
    connectTimeoutMs: integer(100, 120_000).default(5000),
  })
  .superRefine((value, ctx) => {
    const shapes = (['url', 'sentinel', 'cluster'] as const).filter((k) => value[k] !== undefined);
    if (shapes.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          shapes.length === 0
            ? 'needs one of url, sentinel, cluster'
            : `takes exactly one of url, sentinel, cluster (has ${shapes.join(', ')})`,
      });
    }
    if (value.sentinel?.password !== undefined && value.password !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['sentinel', 'password'],
        message: 'set either this or store.redis.password, not both',
      });
    }
    if (value.tls !== undefined && value.url?.startsWith('redis:')) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message: 'applies to a rediss:// url (this one is redis://)',
      });
    }
  });

const store = z.strictObject({ redis: redis.optional() });

const algorithm = z.enum(['EdDSA', 'ES256']);

const tokens = z.strictObject({
  issuer: z.string().min(1).default('tenant-gateway'),
  audience: z.string().min(1).default('tenant-api'),
  ttlSeconds: integer(60, 86_400).default(3600),
  keys: z.string().min(1).optional(),
  algorithms: z
    .array(algorithm)
    .min(1, 'must name at least one algorithm')
    .default(['EdDSA', 'ES256']),
  clockSkewSeconds: integer(0, 300).default(30),
});

const signup = z.strictObject({
  enabled: boolean().default(false),
  /** `cloud_region` of the personal tenants created with new users (signup, seed, CLI). */
  cloudRegion: z.string().min(1).default('local'),
});

const passwords = z.strictObject({
  bcryptCost: integer(4, 15).default(10),
  /** bcrypt worker threads; omitted: one less than the cores (at least one), so the event loop keeps a core. */
  workers: integer(1, 256).optional(),
});

const limits = z.strictObject({
  login: z
    .strictObject({
      perEmail: integer(1, 1_000_000).default(10),
      perIp: integer(1, 1_000_000).default(100),
      windowSeconds: integer(1, 86_400).default(900),
      /**
       * Logins for one e-mail queued or running on the bcrypt pool of one
       * instance; past it 429 at once (issue 12: one client's flood delayed
       * every other login).
       */
      maxQueuedPerEmail: integer(1, 10_000).default(4),
      /** The same per client address. */
      maxQueuedPerIp: integer(1, 10_000).default(8),
    })
    .default({
      perEmail: 10,
      perIp: 100,
      windowSeconds: 900,
      maxQueuedPerEmail: 4,
      maxQueuedPerIp: 8,
    }),
  signup: z
    .strictObject({
      perIp: integer(1, 1_000_000).default(20),
      windowSeconds: integer(1, 86_400).default(3600),
    })
    .default({ perIp: 20, windowSeconds: 3600 }),
  /** Largest request body the gateway's own endpoints accept (proxied bodies are streamed). */
  bodyBytes: integer(256, 10 * 1024 * 1024).default(16 * 1024),
  /**
   * A cap on a whole request (headers and body), 408 past it; 0: none. Off by
   * default: `server.requestBodyIdleTimeoutMs` already stops a client that
   * stalls, and a cap would cut a long upload that keeps moving (issue 20:
   * Node's 300 s default cut them at ~329 s).
   */
  requestTimeoutMs: integer(0, 86_400_000).default(0),
});

/** Client-side timeouts (DESIGN §3 `server`). */
const server = z.strictObject({
  /**
   * How long an idle keep-alive connection stays open. Above the idle timeout
   * of what sits in front (AWS ALB 60 s, nginx `keepalive_timeout` 60 s): a
   * balancer that reuses a connection the gateway has just closed answers its
   * client 502. Node's own default is 5 s.
   */
  keepAliveTimeoutMs: integer(1000, 3_600_000).default(65_000),
  /** A client that has not sent a request's headers within this gets 408 (slowloris). */
  headersTimeoutMs: integer(100, 600_000).default(60_000),
  /**
   * The longest silence within a request body (proxied or to the gateway's
   * own endpoints): past it 408, the connection closes and a proxied
   * request is aborted upstream. A body that keeps moving is never cut.
   */
  requestBodyIdleTimeoutMs: integer(100, 3_600_000).default(60_000),
});

/**
 * Connections to each upstream origin, and each tenant's share of them
 * (issue 12: one tenant's slow uploads held every connection).
 */
const upstreamPool = z.strictObject({
  /** Requests in flight to one upstream origin; more wait (within their route's timeout) for a free one. */
  maxConnections: integer(1, 65_536).default(512),
  /**
   * Requests one tenant may have in flight or waiting per upstream origin;
   * past it 429. Omitted: a quarter of maxConnections (see `tenant-slots.ts`).
   */
  maxPerTenant: integer(1, 65_536).optional(),
});

const tenantRules = z
  .strictObject({
    header: headerName.optional(),
    path: z
      .string()
      .startsWith('/', 'must start with /')
      .refine((p) => p.split('/').includes(':tenant_id'), 'must contain the segment :tenant_id')
      .optional(),
    query: z.string().min(1).optional(),
    host: z
      .string()
      .refine((h) => h.split('.').includes(':tenant_id'), 'must contain the label :tenant_id')
      .optional(),
  })
  .refine((rules) => Object.values(rules).some((v) => v !== undefined), {
    message: 'must name at least one of header, path, query, host',
  });

/** A path prefix as written in config: no dot segments, encodings or backslashes. */
const plainPath = () =>
  z
    .string()
    .startsWith('/', 'must start with /')
    .refine((p) => !/\/\/|\/\.\.?(\/|$)|%|\\/.test(p), 'must be a plain path (no //, .., %, \\)');

/**
 * A browser origin a CORS policy allows: `scheme://host[:port]` exactly as
 * browsers send it, one wildcard label allowed (`https://*.example.com`), or
 * `*` alone (any origin, never with credentials).
 */
const corsOrigin = z.string().refine((origin) => {
  if (origin === '*') return true;
  const concrete = origin.replace(/^(https?:\/\/)\*\./, '$1x.');
  try {
    return new URL(concrete).origin === concrete;
  } catch {
    return false;
  }
}, 'must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *');

/**
 * CORS for browser apps (`proxy/cors.ts`): the gateway answers preflights
 * itself, before authentication, and puts the CORS headers on every answer.
 */
const cors = z
  .strictObject({
    origins: z.array(corsOrigin).min(1, 'must name at least one origin'),
    methods: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z]+$/, 'must be an HTTP method')
          .transform((m) => m.toUpperCase()),
      )
      .min(1)
      .default(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']),
    /** Request headers a page may send (a bearer API needs Authorization). */
    headers: z.array(headerName).default(['Authorization', 'Content-Type']),
    /** Response headers a page may read besides the CORS-safelisted ones. */
    exposeHeaders: z.array(headerName).default([]),
    /** Lets a page send cookies and read the answer (Access-Control-Allow-Credentials). */
    credentials: boolean().default(false),
    /** How long a browser may cache a preflight's answer. */
    maxAgeSeconds: integer(0, 86_400).default(600),
  })
  .superRefine((value, ctx) => {
    if (!value.origins.includes('*')) return;
    if (value.origins.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['origins'],
        message: '* allows every origin: list it alone',
      });
    }
    if (value.credentials) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentials'],
        message: 'cannot be true with origins [*] (browsers refuse it): list the origins',
      });
    }
  });

/** A Host value a route serves: a name, or `*.` and a name (one wildcard label); no port. */
const hostPattern = z
  .string()
  .regex(
    /^(?:\*\.)?(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?$/,
    'must be a host name, or *. and a host name (one wildcard label), without a port',
  )
  .transform((host) => host.toLowerCase().replace(/\.$/, ''));

const route = z.strictObject({
  prefix: plainPath(),
  /**
   * Only requests addressed to these hosts (see `proxy/route-table.ts`):
   * routes are chosen by host, then by prefix. Omitted: any host.
   */
  hosts: z
    .array(hostPattern)
    .min(1, 'must name at least one host (omit the key to serve any host)')
    .optional(),
  /** Omitted: a forward-auth-only route (its rules for `/auth/verify`; never proxied). */
  upstream: httpUrl.optional(),
  /**
   * To the upstream's response head: covers the wait for a connection, and is
   * pushed back while the request body is still moving. 504 past it.
   */
  timeoutMs: integer(1, 3_600_000).default(30_000),
  /**
   * The longest silence within the upstream's response body; past it the
   * response is cut (its head has gone to the client). 0: never. Long enough
   * for streams and long polls that send a heartbeat.
   */
  bodyIdleTimeoutMs: integer(0, 86_400_000).default(300_000),
  tenant: tenantRules.optional(),
  /**
   * `none`: a public route — no token needed; identity headers are still
   * stripped, and set when a valid bearer token comes anyway (an invalid one
   * is refused, 401). Default `bearer`.
   */
  auth: z.enum(['bearer', 'none']).default('bearer'),
  /**
   * Remove `Authorization` before forwarding: the upstream sees only the
   * identity headers, never a replayable token it might log (issue 21; as
   * Envoy's `jwt_authn` by default). `false` for an upstream that verifies
   * the token itself.
   */
  stripAuthorization: boolean().default(true),
  /**
   * TLS to an https upstream: `ca` (PEM file: the CA that signed it, instead
   * of the system's), `serverName` (SNI and the name checked), `cert` + `key`
   * (PEM files: a client certificate, mTLS), `insecureSkipVerify` (no check
   * at all; warned at start).
   */
  tls: z
    .strictObject({
      ca: z.string().min(1).optional(),
      serverName: z.string().min(1).optional(),
      cert: z.string().min(1).optional(),
      key: z.string().min(1).optional(),
      insecureSkipVerify: boolean().default(false),
    })
    .refine((t) => (t.cert === undefined) === (t.key === undefined), {
      message: 'cert and key go together (a client certificate needs both)',
    })
    .optional(),
  /** The upstream sees the path without the route's prefix (`/catalog/items` → `/items`). */
  stripPrefix: boolean().default(false),
  /** The upstream sees the path with this prefix instead of the route's (`/catalog/items` → `/v2/items`). */
  rewrite: z.strictObject({ prefix: plainPath() }).optional(),
  /** CORS for browser apps calling this route; omitted: the upstream's own (preflights then need a token). */
  cors: cors.optional(),
  /** Only tokens for these tenant types pass (others: 403 `forbidden`); omitted: any. */
  tenantTypes: z
    .array(z.enum(['orgtenant', 'usertenant']))
    .min(1, 'must name at least one tenant type (omit the key to admit any)')
    .optional(),
});

const identityHeaders = z.strictObject({
  tenantId: headerName.default('X-Tenant-Id'),
  tenantType: headerName.default('X-Tenant-Type'),
  userId: headerName.default('X-User-Id'),
  userEmail: headerName.default('X-User-Email'),
});

const strippedByDefault = headerNameMatcher(IDENTITY_LIKE_HEADERS);

/**
 * Identity-like headers stripped from proxied requests besides the identity
 * headers themselves (issue 12, class 7): `add` strips more names, `keep`
 * lets names of the default list (`IDENTITY_LIKE_HEADERS` in
 * `proxy/header-names.ts`) through. Any spelling; a trailing `*` is a prefix.
 */
const stripHeaders = z.strictObject({
  add: z.array(headerName).default([]),
  keep: z
    .array(
      headerName.refine(
        (name) => strippedByDefault(foldHeaderName(name)),
        'is not stripped by default, so there is nothing to keep',
      ),
    )
    .default([]),
});

/**
 * The demo of `npm start` (config/gateway.yaml): a built-in echo upstream on
 * this address. Nothing of it runs unless a config has this key.
 */
const demo = z.strictObject({
  echoUpstream: z.strictObject({
    host: hostName().default('127.0.0.1'),
    port: port(),
  }),
});

/** What `/readyz` needs besides keys and not draining (see `ops/readiness.ts`). */
const readiness = z.strictObject({
  /** Unready while the store is unreachable. Off: every instance would leave the Service at once. */
  requireStore: boolean().default(false),
});

const shutdown = z.strictObject({
  /** How long in-flight requests and WebSockets get to finish after SIGTERM. */
  drainSeconds: integer(0, 3600).default(10),
});

/**
 * OpenTelemetry traces (DESIGN §3 `tracing`), off by default. A client's
 * `traceparent` is continued only from `trustedProxies`: anyone else could
 * choose the trace id of the gateway's spans and force every request into
 * the sample. Off, the gateway adds no span and passes `traceparent` through.
 */
const tracing = z.strictObject({
  enabled: boolean().default(false),
  /** The OTLP/HTTP traces URL, full path included (as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). */
  otlpEndpoint: httpUrl.default('http://localhost:4318/v1/traces'),
  serviceName: z.string().min(1).max(200).default('tenant-gateway'),
  /** Share of new traces recorded (0..1); a continued trace follows its parent's decision. */
  sampleRatio: z.number().min(0).max(1).default(0.1),
});

const log = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  pretty: boolean().default(false),
});

/** Paths the gateway serves itself; a route under them could never be reached. */
const RESERVED_PREFIXES = ['/1', '/.well-known', '/auth/verify'];

export const configSchema = z
  .strictObject({
    listen: listen.default({ host: '0.0.0.0', port: 8080 }),
    admin: admin.optional(),
    /** Omitted: `/auth/verify` is served on `listen`. */
    forwardAuth: forwardAuth.optional(),
    store: store.default({}),
    seed: z.string().min(1).optional(),
    tokens: tokens.default(() => tokens.parse({})),
    signup: signup.default({ enabled: false, cloudRegion: 'local' }),
    passwords: passwords.default({ bcryptCost: 10 }),
    limits: limits.default(() => limits.parse({})),
    server: server.default(() => server.parse({})),
    /** Omitted: 512 connections per upstream origin, a quarter of them per tenant. */
    upstreamPool: upstreamPool.optional(),
    trustedProxies: z.array(cidr).default([]),
    identityHeaders: identityHeaders.default(() => identityHeaders.parse({})),
    stripHeaders: stripHeaders.default({ add: [], keep: [] }),
    routes: z.array(route).default([]),
    /** CORS for the identity endpoints (/1/..., /.well-known/...), so a browser app can log in. */
    cors: cors.optional(),
    log: log.default({ level: 'info', pretty: false }),
    tracing: tracing.default(() => tracing.parse({})),
    readiness: readiness.default({ requireStore: false }),
    demo: demo.optional(),
    shutdown: shutdown.default({ drainSeconds: 10 }),
  })
  // Runs even when other keys are wrong, so that every problem is reported at
  // once; the value may then be partly invalid, hence the defensive reads.
  .superRefine(
    (config, ctx) => {
      const routes: unknown = config.routes;
      const seen = new Map<string, number>();
      (Array.isArray(routes) ? routes : []).forEach((r: unknown, i) => {
        const raw = (r as { prefix?: unknown } | null)?.prefix;
        if (typeof raw !== 'string') return;
        const prefix = raw.length > 1 ? raw.replace(/\/+$/, '') : raw;
        if (RESERVED_PREFIXES.some((p) => prefix === p || prefix.startsWith(`${p}/`))) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'prefix'],
            message: `is reserved for the gateway's own endpoints (${RESERVED_PREFIXES.join(', ')})`,
          });
        }
        const { stripPrefix, rewrite, tls, upstream, cors } = r as Record<string, unknown>;
        if (cors !== undefined && upstream === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'cors'],
            message:
              'applies where the gateway forwards (a route with an upstream); with forward-auth, the ingress answers CORS',
          });
        }
        if (tls !== undefined && typeof upstream === 'string' && !upstream.startsWith('https:')) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'tls'],
            message: 'applies to an https:// upstream',
          });
        }
        if (stripPrefix === true && rewrite !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'rewrite'],
            message: 'use either stripPrefix or rewrite, not both',
          });
        }
        // One route per prefix and host: a route without hosts serves the rest.
        const hosts = (r as { hosts?: unknown }).hosts;
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
            path: ['routes', i, 'prefix'],
            message:
              name === ''
                ? `duplicates routes[${first}].prefix`
                : `duplicates routes[${first}].prefix for host ${name}`,
          });
          break;
        }
      });
      checkListeners(config, ctx);
      checkTimeouts(config.server, config.limits, ctx);
      checkUpstreamPool(config.upstreamPool, ctx);
      const headers: unknown = config.identityHeaders;
      if (headers === null || typeof headers !== 'object') return;
      const names = Object.values(headers)
        .filter((h): h is string => typeof h === 'string')
        .map((h) => h.toLowerCase());
      if (new Set(names).size !== names.length) {
        ctx.addIssue({ code: 'custom', path: ['identityHeaders'], message: 'names must differ' });
      }
    },
    { when: () => true },
  );

const ANY_ADDRESS = new Set(['0.0.0.0', '::', '[::]']);

/** Two listeners on one port would fail at start (EADDRINUSE) after `config check` said ok. */
function checkListeners(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const seen: { key: string; host: string; port: number }[] = [];
  for (const key of ['listen', 'admin', 'forwardAuth']) {
    const { host, port } = (config[key] ?? {}) as { host?: unknown; port?: unknown };
    if (typeof host !== 'string' || typeof port !== 'number' || port === 0) continue;
    const clash = seen.find(
      (other) =>
        other.port === port &&
        (other.host === host || ANY_ADDRESS.has(other.host) || ANY_ADDRESS.has(host)),
    );
    if (clash !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [key, 'port'],
        message: `is ${clash.key}.port too (${port}): each listener needs a port of its own`,
      });
    }
    seen.push({ key, host, port });
  }
}

/** Node refuses a server whose headers timeout exceeds its request timeout. */
function checkTimeouts(server: unknown, limits: unknown, ctx: z.RefinementCtx): void {
  const headers = (server as { headersTimeoutMs?: unknown } | undefined)?.headersTimeoutMs;
  const request = (limits as { requestTimeoutMs?: unknown } | undefined)?.requestTimeoutMs;
  if (typeof headers !== 'number' || typeof request !== 'number') return;
  if (request > 0 && headers > request) {
    ctx.addIssue({
      code: 'custom',
      path: ['server', 'headersTimeoutMs'],
      message: `must not exceed limits.requestTimeoutMs (${request})`,
    });
  }
}

function checkUpstreamPool(value: unknown, ctx: z.RefinementCtx): void {
  const { maxConnections, maxPerTenant } = (value ?? {}) as Record<string, unknown>;
  if (typeof maxConnections !== 'number' || typeof maxPerTenant !== 'number') return;
  if (maxPerTenant > maxConnections) {
    ctx.addIssue({
      code: 'custom',
      path: ['upstreamPool', 'maxPerTenant'],
      message: `must not exceed upstreamPool.maxConnections (${maxConnections})`,
    });
  }
}

/** The validated configuration, defaults filled in. */
export type GatewayConfig = z.output<typeof configSchema>;
export type RouteConfig = GatewayConfig['routes'][number];
export type RedisConfig = NonNullable<GatewayConfig['store']['redis']>;
export type CorsConfig = NonNullable<GatewayConfig['cors']>;
