/**
 * The configuration schema: types, defaults and validation in one
 * declaration. Every object is strict: an unknown key is an error, reported
 * with the nearest known key (see `load.ts`).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { foldHeaderName, headerNameMatcher, IDENTITY_LIKE_HEADERS } from '../header-names.js';
import { PROBE_PATHS } from '../ops-paths.js';

/** Accepts numbers, and strings of digits (values that came from `${ENV}`). */
const integer = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
    z.number().int().min(min).max(max),
  );

/** Accepts numbers, and strings of a decimal number (values that came from `${ENV}`). */
const decimal = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v),
    z.number().min(min).max(max),
  );

const boolean = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

const port = () => integer(0, 65535);

const hostName = () => z.string().min(1, 'must not be empty');

const httpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL')
  .meta({ typeName: 'http(s) URL' });

const redisUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'redis:' || url.protocol === 'rediss:';
    } catch {
      return false;
    }
  }, 'must be a redis:// or rediss:// URL')
  .meta({ typeName: '`redis://` or `rediss://` URL' });

const cidr = z
  .string()
  .refine((value) => {
    const [address, bits, ...rest] = value.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    if (bits === undefined) return true;
    const n = Number(bits);
    return /^\d+$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
  }, 'must be an IP address or CIDR block (10.0.0.0/8, fd00::/8)')
  .meta({ typeName: 'IP address or CIDR block' });

/** An HTTP header name (RFC 9110 token). */
const headerName = z
  .string()
  .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'must be an HTTP header name')
  .meta({ typeName: 'HTTP header name' });

const listen = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the main listener binds to'),
    port: port().default(8080).describe('port of the main listener (0: any free port)'),
    // Off by default: on the public port they would answer anyone and
    // shadow an upstream's own /healthz or /metrics (issue 30).
    opsEndpoints: boolean()
      .default(false)
      .describe(
        'also answer `/healthz`, `/readyz` and `/metrics` here, for a platform that can probe only the serving port; anyone who reaches this listener then reads the metrics, and a route whose prefix is one of those paths is refused. Off: they are served on `admin` only',
      ),
  })
  .meta({
    description:
      'The main listener: the proxied routes and the identity API (`/1/…`, `/.well-known/…`).',
    examples: [{ host: '0.0.0.0', port: 8080 }],
  });

const admin = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the admin listener binds to'),
    port: port().default(9090).describe('port of the admin listener'),
    configReload: boolean()
      .default(false)
      .describe('allow `POST /config/reload` on the admin listener'),
  })
  .meta({
    description:
      'Admin listener for `/healthz`, `/readyz`, `/metrics` (and `POST /config/reload`): keep it off the public network. Omitted: they are not served at all — never on `listen`, unless `listen.opsEndpoints` asks for it.',
    examples: [{ host: '0.0.0.0', port: 9090, configReload: true }],
  });

const forwardAuth = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the forward-auth listener binds to'),
    port: port().default(8081).describe('port of the forward-auth listener'),
  })
  .meta({
    description:
      'A listener of its own for `/auth/verify` (then the main listener does not serve it), so a NetworkPolicy can let only the ingress controller reach it. Omitted: `/auth/verify` is served on `listen`.',
    examples: [{ port: 8081 }],
  });

/** `host:port`, a bracketed IPv6 address allowed (`[fd00::1]:6379`). */
const hostPort = z
  .string()
  .refine((value) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
    return match !== null && Number(match[2]) > 0 && Number(match[2]) <= 65535;
  }, 'must be host:port (10.0.0.5:26379, [fd00::1]:6379)')
  .meta({ typeName: '`host:port`' });

const redisNodes = z.array(hostPort).min(1, 'must name at least one node');

/** Through ioredis's own client for each of `url`, `sentinel`, `cluster`. */
const redis = z
  .strictObject({
    url: redisUrl
      .optional()
      .describe(
        'a single Redis server (`redis://:${REDIS_PASSWORD}@host:6379/0`). Exactly one of `url`, `sentinel`, `cluster`',
      ),
    sentinel: z
      .strictObject({
        name: z.string().min(1).describe("the master group's name, as the sentinels know it"),
        nodes: redisNodes.describe(
          'sentinels as `host:port` (`10.0.0.5:26379`, `[fd00::1]:26379`)',
        ),
        password: z
          .string()
          .min(1)
          .optional()
          .describe('password of the Redis nodes (or set `store.redis.password`; not both)'),
        sentinelPassword: z
          .string()
          .min(1)
          .optional()
          .describe('password of the sentinels themselves, when they require one'),
      })
      .optional()
      .describe(
        'Redis Sentinel: the gateway asks the sentinels for the master and follows a failover by itself. Writes wait for one replica (`WAIT`)',
      ),
    cluster: z
      .strictObject({
        nodes: redisNodes.describe(
          'any few nodes as `host:port` (`10.0.0.7:6379`); the rest are discovered',
        ),
      })
      .optional()
      .describe(
        "Redis Cluster. Session events are heard on every master; writes wait for a replica of their slot's master",
      ),
    username: z
      .string()
      .min(1)
      .optional()
      .describe('Redis ACL user of the Redis nodes (or in the URL)'),
    password: z
      .string()
      .min(1)
      .optional()
      .describe(
        'password of the Redis nodes (or in the URL); `sentinel.password` is the same for Sentinel (set one)',
      ),
    tls: z
      .strictObject({
        ca: z
          .string()
          .min(1)
          .optional()
          .describe('PEM file of the CA that signed Redis (relative to the config file)'),
        servername: z.string().min(1).optional().describe('the name checked and sent as SNI'),
      })
      .optional()
      .describe(
        'TLS for Sentinel or Cluster (sentinels and nodes), or the CA and SNI of a `rediss://` URL',
      ),
    keyPrefix: z.string().min(1).max(64).default('tg:').describe('every key starts with it'),
    commandTimeoutMs: integer(50, 60_000)
      .default(1000)
      .describe('a store call slower than this fails (→ 503): the gateway never hangs on Redis'),
    connectTimeoutMs: integer(100, 120_000)
      .default(5000)
      .describe('how long start-up waits for Redis'),
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

const store = z
  .strictObject({
    redis: redis
      .optional()
      .describe(
        'Redis shared by all instances. Omitted: the embedded in-memory store (one instance)',
      ),
  })
  .meta({
    description:
      'Where users, tenants and sessions live. Omit `store` (or `store.redis`) for the embedded in-memory store.',
    examples: [{ redis: { url: 'redis://:${REDIS_PASSWORD}@redis:6379/0', keyPrefix: 'tg:' } }],
  });

const algorithm = z.enum(['EdDSA', 'ES256']);

const tokens = z
  .strictObject({
    issuer: z
      .string()
      .min(1)
      .default('tenant-gateway')
      .describe('`iss` of issued tokens; required on verify'),
    audience: z.string().min(1).default('tenant-api').describe('`aud`; required on verify'),
    ttlSeconds: integer(60, 86_400).default(3600).describe('token lifetime'),
    keys: z
      .string()
      .min(1)
      .optional()
      .describe(
        'directory of PEM private keys shared by all instances (relative to the config file); omitted: an ephemeral key (warned)',
      ),
    algorithms: z
      .array(algorithm)
      .min(1, 'must name at least one algorithm')
      .default(['EdDSA', 'ES256'])
      .describe('algorithms accepted on verify'),
    clockSkewSeconds: integer(0, 300).default(30).describe('tolerance on `exp`/`nbf`/`iat`'),
  })
  .meta({
    description: 'The access tokens the gateway issues and verifies.',
    examples: [{ issuer: 'https://auth.example.com', audience: 'orders-api', keys: './keys' }],
  });

/**
 * Lease mode is what makes "after the 204, no instance accepts the token"
 * hold across hosts; it costs a revocation its confirmation round trip and
 * each instance a few store commands a second, never one per request.
 */
const revocation = z
  .strictObject({
    mode: z
      .enum(['lease', 'plain'])
      .default('lease')
      .describe(
        '`lease`: a logout, password change, disabled user or removed membership is answered only once every instance holding a lease has applied it, or its lease has run out (strict across hosts, see [Security](security.md#revocation-across-hosts)); `plain`: answered once the change is stored and published (strict on one host; another host may accept the old token for its own delay to the store). A store shared by several processes only: the embedded store is one process',
      ),
    leaseMs: integer(200, 60_000)
      .default(2000)
      .describe(
        "length of an instance's lease, renewed four times per length: an instance cut off from the store stops trusting its session cache within this; a revocation waits at most 1.5 times this for an instance that does not answer",
      ),
  })
  .meta({
    description: 'How a revocation reaches the other instances (a Redis store).',
    examples: [{ mode: 'lease', leaseMs: 1000 }],
  });

const signup = z
  .strictObject({
    enabled: boolean().default(false).describe('allow `POST /1/users`'),
    cloudRegion: z
      .string()
      .min(1)
      .default('local')
      .describe(
        '`cloud_region` of the personal tenants created with new users (signup, seed, CLI)',
      ),
  })
  .meta({
    description: 'Self-service signup.',
    examples: [{ enabled: true, cloudRegion: 'eu-west-1' }],
  });

const passwords = z
  .strictObject({
    bcryptCost: integer(4, 15).default(10).describe('bcrypt cost for new hashes'),
    workers: integer(1, 256)
      .optional()
      .describe(
        'bcrypt worker threads; omitted: one less than the cores (at least one), so the event loop keeps a core',
      ),
  })
  .meta({
    description: 'Password hashing.',
    examples: [{ bcryptCost: 12, workers: 2 }],
  });

const audit = z
  .strictObject({
    maxEventsPerStream: integer(100, 10_000_000)
      .default(10_000)
      .describe(
        'events each audit stream keeps (one per tenant, one for user-level events); Redis trims in whole nodes, so up to 100 more',
      ),
    maxAgeDays: integer(1, 3650)
      .optional()
      .describe(
        'events older than this are dropped at the next event of their stream; omitted: only the count bounds a stream',
      ),
  })
  .meta({
    description:
      'The audit streams (docs/audit.md): logins, tokens, password and membership changes, kept in the store.',
    examples: [{ maxEventsPerStream: 50000, maxAgeDays: 90 }],
  });

const limits = z
  .strictObject({
    login: z
      .strictObject({
        perEmail: integer(1, 1_000_000)
          .default(10)
          .describe('failed logins allowed per e-mail per window'),
        perIp: integer(1, 1_000_000)
          .default(100)
          .describe('failed logins allowed per client IP per window'),
        windowSeconds: integer(1, 86_400)
          .default(900)
          .describe('the window of `perEmail` and `perIp`'),
        // The queue caps keep one client's flood from delaying every other login.
        maxQueuedPerEmail: integer(1, 10_000)
          .default(4)
          .describe(
            "logins of one e-mail waiting for or running on this instance's bcrypt pool; past it 429 at once",
          ),
        maxQueuedPerIp: integer(1, 10_000)
          .default(8)
          .describe(
            "logins from one client IP waiting for or running on this instance's bcrypt pool; past it 429 at once",
          ),
      })
      .describe('login throttling')
      .default({
        perEmail: 10,
        perIp: 100,
        windowSeconds: 900,
        maxQueuedPerEmail: 4,
        maxQueuedPerIp: 8,
      }),
    signup: z
      .strictObject({
        perIp: integer(1, 1_000_000).default(20).describe('signups per client IP per window'),
        windowSeconds: integer(1, 86_400).default(3600).describe('the window of `perIp`'),
      })
      .default({ perIp: 20, windowSeconds: 3600 })
      .describe('signup throttling'),
    bodyBytes: integer(256, 10 * 1024 * 1024)
      .default(16 * 1024)
      .describe(
        "largest body the gateway's own endpoints read (proxied bodies are streamed, unlimited)",
      ),
    // Off by default: `server.requestBodyIdleTimeoutMs` already stops a client
    // that stalls, and a cap would cut a long upload that keeps moving (Node's
    // own 300 s default cut them at ~329 s).
    requestTimeoutMs: integer(0, 86_400_000)
      .default(0)
      .describe(
        'a client slower than this with its whole request (headers and body) gets 408; `0`: no limit, the idle timeouts of `server` govern',
      ),
  })
  .meta({
    description:
      "Login and signup throttling, the body cap of the gateway's own endpoints, and a cap on a whole request.",
    examples: [{ login: { perEmail: 5, windowSeconds: 600 }, bodyBytes: 32768 }],
  });

const server = z
  .strictObject({
    // Node's own default is 5 s, below every balancer's idle timeout.
    keepAliveTimeoutMs: integer(1000, 3_600_000)
      .default(65_000)
      .describe(
        'idle keep-alive connections from clients close after this; keep it above the idle timeout of any load balancer in front (AWS ALB 60 s, nginx `keepalive_timeout` 60 s, GCP 600 s: raise it there), or the balancer may reuse a connection the gateway is closing and answer 502',
      ),
    headersTimeoutMs: integer(100, 600_000)
      .default(60_000)
      .describe(
        'a client slower than this with its request headers gets 408 (slowloris); at most `limits.requestTimeoutMs` when that is set',
      ),
    requestBodyIdleTimeoutMs: integer(100, 3_600_000)
      .default(60_000)
      .describe(
        "a request body (proxied or to the gateway's own endpoints) that receives no byte for this long gets 408, the connection closes and its upstream request is aborted; an upload that keeps moving is never cut",
      ),
  })
  .meta({
    description: 'Timeouts on the client side of the gateway.',
    examples: [{ keepAliveTimeoutMs: 620000, headersTimeoutMs: 30000 }],
  });

/** The per-tenant share keeps one tenant's slow uploads from holding every connection. */
const upstreamPool = z
  .strictObject({
    maxConnections: integer(1, 65_536)
      .default(512)
      .describe(
        "requests in flight to one upstream origin; more wait, first come first served, within their route's `timeoutMs`",
      ),
    // Omitted: see `tenant-slots.ts`.
    maxPerTenant: integer(1, 65_536)
      .optional()
      .describe(
        'requests one tenant may have in flight or waiting per upstream origin; past it 429. At most `maxConnections`; omitted: a quarter of `maxConnections`',
      ),
  })
  .meta({
    description:
      "Connections to each upstream origin, and each tenant's share of them. Omitted: 512 connections per upstream origin, a quarter of them per tenant.",
    examples: [{ maxConnections: 1024, maxPerTenant: 128 }],
  });

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

/** A path prefix as written in config: no dot segments, encodings or backslashes. */
const plainPath = () =>
  z
    .string()
    .startsWith('/', 'must start with /')
    .refine((p) => !/\/\/|\/\.\.?(\/|$)|%|\\/.test(p), 'must be a plain path (no //, .., %, \\)')
    .meta({ typeName: 'path' });

/**
 * A browser origin a CORS policy allows: `scheme://host[:port]` exactly as
 * browsers send it, one wildcard label allowed (`https://*.example.com`), or
 * `*` alone (any origin, never with credentials).
 */
const corsOrigin = z
  .string()
  .refine((origin) => {
    if (origin === '*') return true;
    const concrete = origin.replace(/^(https?:\/\/)\*\./, '$1x.');
    try {
      return new URL(concrete).origin === concrete;
    } catch {
      return false;
    }
  }, 'must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *')
  .meta({ typeName: 'origin' });

/**
 * CORS for browser apps (`proxy/decide/cors.ts`): the gateway answers preflights
 * itself, before authentication, and puts the CORS headers on every answer.
 */
const cors = z
  .strictObject({
    origins: z
      .array(corsOrigin)
      .min(1, 'must name at least one origin')
      .describe(
        'origins allowed, exactly as browsers send them (`https://app.example.com`), one wildcard label allowed (`https://*.example.com`); `*` alone allows any origin, never with `credentials`',
      ),
    methods: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z]+$/, 'must be an HTTP method')
          .transform((m) => m.toUpperCase())
          .meta({ typeName: 'HTTP method' }),
      )
      .min(1)
      .default(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
      .describe('methods a page may use (any case)'),
    headers: z
      .array(headerName)
      .default(['Authorization', 'Content-Type'])
      .describe('request headers a page may send (a bearer API needs `Authorization`)'),
    exposeHeaders: z
      .array(headerName)
      .default([])
      .describe('response headers a page may read besides the CORS-safelisted ones'),
    credentials: boolean()
      .default(false)
      .describe(
        'lets a page send cookies and read the answer (`Access-Control-Allow-Credentials`)',
      ),
    maxAgeSeconds: integer(0, 86_400)
      .default(600)
      .describe("how long a browser may cache a preflight's answer"),
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
  .transform((host) => host.toLowerCase().replace(/\.$/, ''))
  .meta({ typeName: 'host name' });

/** One side of `routes[].rateLimit`: a token bucket. */
const rateBucket = (who: string) =>
  z
    .strictObject({
      requestsPerSecond: decimal(0.001, 1_000_000).describe(
        `requests per second one ${who} may send under this route, cluster-wide (every instance sharing the store together); refilled continuously`,
      ),
      burst: decimal(1, 10_000_000).describe(
        `requests one ${who} may send at once after a quiet spell (the bucket's size); at least 1`,
      ),
    })
    .optional()
    .describe(
      `the ${who}'s token bucket; past it 429 \`too_many_requests\` with \`Retry-After\` and \`RateLimit\` headers. Omitted: no ${who} limit`,
    );

/** Token buckets per tenant and per user of a route (see `docs/rate-limits.md`). */
const rateLimit = z
  .strictObject({
    perTenant: rateBucket('tenant'),
    perUser: rateBucket('user'),
  })
  .refine((r) => r.perTenant !== undefined || r.perUser !== undefined, {
    message: 'must set perTenant, perUser or both (omit the key for no limit)',
  });

const route = z.strictObject({
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
  auth: z
    .enum(['bearer', 'none'])
    .default('bearer')
    .describe(
      '`none`: a public route — no token needed, identity headers still stripped; a valid bearer token sent anyway is honoured (identity set, tenant rules applied), an invalid one gets 401; another scheme (`Basic` for the upstream) passes through. Public paths inside a protected prefix: a route of their own, with the longer prefix',
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
  cors: cors
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
});

const rateLimits = z
  .strictObject({
    // The bound on what instances admit together does not depend on it: it
    // sets how long an instance whose share ran out waits for the next one,
    // against N / interval script calls per second for a bucket busy on N instances.
    reconcileIntervalMs: integer(50, 10_000)
      .default(500)
      .describe(
        'how often each instance settles its active rate-limit buckets with the shared store (one script call per active key); a restart applies a change',
      ),
  })
  .meta({
    description:
      'How instances sharing one Redis agree on `routes[].rateLimit` (see `docs/rate-limits.md`). The in-memory store limits in process only.',
    examples: [{ reconcileIntervalMs: 250 }],
  });

const identityHeaders = z
  .strictObject({
    tenantId: headerName.default('X-Tenant-Id').describe("header carrying the token's tenant id"),
    tenantType: headerName
      .default('X-Tenant-Type')
      .describe("header carrying the token's tenant type (`orgtenant`, `usertenant`)"),
    userId: headerName.default('X-User-Id').describe("header carrying the token's user id"),
    userEmail: headerName
      .default('X-User-Email')
      .describe("header carrying the token's user e-mail"),
  })
  .meta({
    description:
      "Names of the headers the gateway sets on proxied requests (and forward-auth answers) from the verified token; a client's own values are stripped. The names must differ.",
    examples: [{ tenantId: 'X-Org-Id', userId: 'X-Subject' }],
  });

const strippedByDefault = headerNameMatcher(IDENTITY_LIKE_HEADERS);

/**
 * Identity-like headers stripped from proxied requests besides the identity
 * headers themselves: `add` strips more names, `keep`
 * lets names of the default list (`IDENTITY_LIKE_HEADERS` in
 * `header-names.ts`) through. Any spelling; a trailing `*` is a prefix.
 */
const stripHeaders = z
  .strictObject({
    add: z
      .array(headerName)
      .default([])
      .describe(
        'extra header names to strip from clients (`X-Internal-*`: a trailing `*` is a prefix)',
      ),
    keep: z
      .array(
        headerName.refine(
          (name) => strippedByDefault(foldHeaderName(name)),
          'is not stripped by default, so there is nothing to keep',
        ),
      )
      .default([])
      .describe('names of the default identity-like list to let through'),
  })
  .meta({
    description:
      'Identity-like headers (`X-Forwarded-User`, `X-Auth-Request-*`, …) are stripped from proxied requests besides the identity headers themselves; this adjusts the list. Names in any spelling.',
    examples: [{ add: ['X-Internal-*'], keep: ['X-Remote-User'] }],
  });

/**
 * The demo of `npm start` (config/gateway.yaml): a built-in echo upstream on
 * this address. Nothing of it runs unless a config has this key.
 */
const demo = z
  .strictObject({
    echoUpstream: z
      .strictObject({
        host: hostName().default('127.0.0.1').describe('address of the echo upstream'),
        port: port().describe('port of the echo upstream'),
      })
      .describe('`serve` also starts a built-in echo upstream there'),
  })
  .meta({
    description: 'The `npm start` demo (`config/gateway.yaml`). Omitted: nothing of the demo runs.',
    examples: [{ echoUpstream: { host: '127.0.0.1', port: 9001 } }],
  });

/** See `ops/readiness.ts`. */
const readiness = z
  .strictObject({
    requireStore: boolean()
      .default(false)
      .describe(
        '`/readyz` turns 503 while the store is unreachable. Off by default: every instance would leave the Service at once',
      ),
  })
  .meta({
    description: 'What `/readyz` needs besides signing keys and not draining.',
    examples: [{ requireStore: true }],
  });

const shutdown = z
  .strictObject({
    drainSeconds: integer(0, 3600)
      .default(10)
      .describe('how long in-flight requests and WebSockets get to finish after SIGTERM'),
  })
  .meta({
    description: 'Graceful shutdown.',
    examples: [{ drainSeconds: 30 }],
  });

/**
 * A client's `traceparent` is continued only from `trustedProxies`: anyone
 * else could choose the trace id of the gateway's spans and force every
 * request into the sample.
 */
const tracing = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe('OpenTelemetry traces; off, nothing is added and `traceparent` passes through'),
    otlpEndpoint: httpUrl
      .default('http://localhost:4318/v1/traces')
      .describe(
        'the OTLP/HTTP traces URL of a collector, path included (as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)',
      ),
    serviceName: z
      .string()
      .min(1)
      .max(200)
      .default('tenant-gateway')
      .describe('`service.name` of the spans'),
    sampleRatio: decimal(0, 1)
      .default(0.1)
      .describe(
        "share of new traces recorded; a trace continued from a trusted proxy follows its parent's decision",
      ),
  })
  .meta({
    description: 'OpenTelemetry traces, off by default (see [Operations](operations.md#traces)).',
    examples: [
      { enabled: true, otlpEndpoint: 'http://otel-collector:4318/v1/traces', sampleRatio: 0.05 },
    ],
  });

/**
 * Lines are gathered and written together, as nginx's `buffer=`/`flush=`:
 * one write per `bytes` instead of one per line. Memory stays bounded: the
 * write is blocking, as an unbuffered log's is, so the buffer never
 * holds more than `bytes` and one line.
 */
const logBuffer = z
  .strictObject({
    bytes: integer(0, 1024 * 1024)
      .default(8192)
      .describe('lines are written once this many bytes are waiting; 0 writes each line at once'),
    flushMs: integer(10, 60_000).default(1000).describe('the longest a line waits in the buffer'),
  })
  .meta({
    description:
      'Batched writes of the log, flushed on SIGTERM/SIGINT, on a `fatal` line and before exit.',
    examples: [{ bytes: 65536, flushMs: 2000 }],
  });

const log = z
  .strictObject({
    level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('the least severe level logged'),
    pretty: boolean()
      .default(false)
      .describe('human-readable logs (pino-pretty) instead of JSON lines'),
    buffer: logBuffer.default(() => logBuffer.parse({})),
  })
  .meta({
    description: 'Logs (JSON lines on standard output).',
    examples: [{ level: 'debug', pretty: true }],
  });

/** Paths the gateway serves itself; a route under them could never be reached. */
const RESERVED_PREFIXES = ['/1', '/.well-known', '/auth/verify'];

export const configSchema = z
  .strictObject({
    listen: listen.default({ host: '0.0.0.0', port: 8080, opsEndpoints: false }),
    admin: admin.optional(),
    forwardAuth: forwardAuth.optional(),
    store: store.default({}),
    seed: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: 'A seed file (users, tenants) upserted at start, relative to the config file.',
        examples: ['./seed.yaml'],
      }),
    tokens: tokens.default(() => tokens.parse({})),
    revocation: revocation.default(() => revocation.parse({})),
    signup: signup.default({ enabled: false, cloudRegion: 'local' }),
    passwords: passwords.default({ bcryptCost: 10 }),
    limits: limits.default(() => limits.parse({})),
    audit: audit.default(() => audit.parse({})),
    server: server.default(() => server.parse({})),
    upstreamPool: upstreamPool.optional(),
    rateLimits: rateLimits.default({ reconcileIntervalMs: 500 }),
    trustedProxies: z
      .array(cidr)
      .default([])
      .meta({
        description:
          'IP addresses or CIDR blocks whose `X-Forwarded-*` headers (and `traceparent`) are believed.',
        examples: [['10.0.0.0/8', 'fd00::/8']],
      }),
    identityHeaders: identityHeaders.default(() => identityHeaders.parse({})),
    stripHeaders: stripHeaders.default({ add: [], keep: [] }),
    routes: z
      .array(route)
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
      }),
    cors: cors.optional().meta({
      description:
        'CORS for the identity endpoints (`/1/…`, `/.well-known/…`), so a browser app can log in; the keys are those of `routes[].cors`.',
      examples: [{ origins: ['https://app.example.com'], credentials: true }],
    }),
    log: log.default(() => log.parse({})),
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
      const opsOnListen = (config.listen as { opsEndpoints?: unknown } | undefined)?.opsEndpoints;
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
        const { stripPrefix, rewrite, tls, upstream, cors, rateLimit } = r as Record<
          string,
          unknown
        >;
        if (opsOnListen === true && upstream !== undefined && shadowedByOps(prefix)) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'prefix'],
            message: `is a path the gateway answers itself with listen.opsEndpoints (${PROBE_PATHS.join(', ')}, in any letter case): the upstream would not see it; serve them on admin instead, or move the route`,
          });
        }
        if (rateLimit !== undefined && upstream === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['routes', i, 'rateLimit'],
            message:
              'applies where the gateway forwards (a route with an upstream); `/auth/verify` does not count requests',
          });
        }
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
