import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  defaultConfig,
  loadConfigFile,
  loadConfigFiles,
  parseConfigText,
  validateConfig,
} from '../../src/config/index.js';
import { CONFIG_SOURCE as SOURCE, configErrorOf } from '../support/config-problems.js';

/** The problems of a config that must be refused, each named in its message (fails the test when it is accepted). */
function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  const err = configErrorOf(text, env);
  expect(err.message).toContain(SOURCE);
  for (const p of err.problems) expect(err.message).toContain(p);
  return err.problems;
}

const route = (prefix: string, upstream = 'http://127.0.0.1:9001') =>
  `  - { prefix: ${prefix}, upstream: ${upstream} }`;

describe('key paths of problems', () => {
  it('refuses two listeners on one port (serve would die on EADDRINUSE), names the later one', () => {
    expect(problemsOf('listen: { port: 9090 }\nadmin: { port: 9090 }')).toEqual([
      'admin.port: is listen.port too (9090): each listener needs a port of its own',
    ]);
    expect(
      problemsOf(
        'listen: { host: 127.0.0.1, port: 8080 }\nforwardAuth: { host: 0.0.0.0, port: 8080 }',
      ),
    ).toEqual([
      'forwardAuth.port: is listen.port too (8080): each listener needs a port of its own',
    ]);
    // Different addresses may share a port; port 0 is a new port each time.
    expect(
      parseConfigText(
        'listen: { host: 127.0.0.1, port: 8080 }\nadmin: { host: 127.0.0.2, port: 8080 }\nforwardAuth: { port: 0 }',
        SOURCE,
        {},
      ).forwardAuth,
    ).toEqual({ host: '0.0.0.0', port: 0, grpc: false, grpcPort: 8082 });
  });

  it('gRPC: the ext_authz port is a listener too; a gRPC route keys scopes by gRPC method', () => {
    expect(problemsOf('listen: { port: 8082 }\nforwardAuth: { port: 8081, grpc: true }')).toEqual([
      'forwardAuth.grpcPort: is listen.port too (8082): each listener needs a port of its own',
    ]);
    // Without grpc: true there is no ext_authz listener to clash.
    expect(
      parseConfigText('listen: { port: 8082 }\nforwardAuth: { port: 8081 }', SOURCE, {}).forwardAuth
        ?.grpc,
    ).toBe(false);
    const grpcRoute = (extra: string) =>
      problemsOf(
        `routes:\n  - { prefix: /pkg.Svc, upstream: "http://127.0.0.1:9001", protocol: grpc, ${extra} }`,
      );
    expect(
      parseConfigText(
        'routes:\n  - { prefix: /pkg.Svc, upstream: "http://127.0.0.1:9001", protocol: grpc, scopes: { "/pkg.Svc/Get": [a], "*": [b] } }',
        SOURCE,
        {},
      ).routes[0]?.scopes,
    ).toEqual({ '/pkg.Svc/Get': ['a'], '*': ['b'] });
    expect(grpcRoute('scopes: { GET: [a] }')).toEqual([
      'routes[0].scopes.GET: a gRPC route names gRPC methods (/pkg.Service/Method) or *',
    ]);
    expect(grpcRoute('auth: session')).toContain(
      'routes[0].auth: session does not apply to a gRPC route (bearer or none)',
    );
    expect(
      problemsOf(
        'routes:\n  - { prefix: /orders, upstream: "http://127.0.0.1:9001", scopes: { "/pkg.Svc/Get": [a] } }',
      ),
    ).toEqual([
      'routes[0].scopes./pkg.Svc/Get: names a gRPC method: only a route with protocol: grpc takes those',
    ]);
  });

  it('names bad tracing settings', () => {
    expect(
      problemsOf('tracing: { enabled: true, otlpEndpoint: "collector:4318", sampleRatio: 1.5 }\n'),
    ).toEqual([
      'tracing.otlpEndpoint: must be an http(s) URL',
      'tracing.sampleRatio: must be at most 1',
    ]);
  });

  it('names bad revocation settings', () => {
    expect(problemsOf('revocation: { mode: strict, leaseMs: 50 }\n')).toEqual([
      'revocation.mode: must be one of lease, plain',
      'revocation.leaseMs: must be at least 200',
    ]);
  });

  it('names a bad upstream by its index in routes', () => {
    const problems = problemsOf(
      ['routes:', route('/orders'), route('/billing', 'ftp://files.example.com')].join('\n'),
    );
    expect(problems).toEqual(['routes[1].upstream: must be an http(s) URL']);
  });

  it.each([
    ['listen: { port: http }', 'listen.port: must be a number, not a string'],
    ['listen: { port: 70000 }', 'listen.port: must be at most 65535'],
    ['listen: { port: -1 }', 'listen.port: must be at least 0'],
    ['listen: { port: 80.5 }', 'listen.port: must be a whole number'],
    ['listen: { host: "" }', 'listen.host: must not be empty'],
    ['listen: 8080', 'listen: must be a mapping, not a number'],
    ['listen:', 'listen: must be a mapping, not null'],
    ['signup: { enabled: yes please }', 'signup.enabled: must be a boolean, not a string'],
    ['seed: 5', 'seed: must be a string, not a number'],
    ['tokens: { algorithms: [HS256] }', 'tokens.algorithms[0]: must be one of EdDSA, ES256'],
    ['tokens: { algorithms: [] }', 'tokens.algorithms: must name at least one algorithm'],
    ['tokens: { ttlSeconds: 10 }', 'tokens.ttlSeconds: must be at least 60'],
    ['passwords: { bcryptCost: 99 }', 'passwords.bcryptCost: must be at most 15'],
    [
      'log: { level: loud }',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    ['trustedProxies: 10.0.0.0/8', 'trustedProxies: must be a list, not a string'],
    [
      'trustedProxies: [10.0.0.0/33]',
      'trustedProxies[0]: must be an IP address or CIDR block (10.0.0.0/8, fd00::/8)',
    ],
    [
      'store: { redis: { url: http://cache:6379 } }',
      'store.redis.url: must be a redis:// or rediss:// URL',
    ],
    ['store: { redis: {} }', 'store.redis: needs one of url, sentinel, cluster'],
    [
      'store: { redis: { url: "redis://a:6379", cluster: { nodes: ["b:7000"] } } }',
      'store.redis: takes exactly one of url, sentinel, cluster (has url, cluster)',
    ],
    [
      'store: { redis: { sentinel: { nodes: ["s1:26379"] } } }',
      'store.redis.sentinel.name: is required',
    ],
    [
      'store: { redis: { sentinel: { name: m, nodes: [] } } }',
      'store.redis.sentinel.nodes: must name at least one node',
    ],
    [
      'store: { redis: { sentinel: { name: m, nodes: ["s1"] } } }',
      'store.redis.sentinel.nodes[0]: must be host:port (10.0.0.5:26379, [fd00::1]:6379)',
    ],
    [
      'store: { redis: { cluster: { nodes: ["c1:6379", "c2:99999"] } } }',
      'store.redis.cluster.nodes[1]: must be host:port (10.0.0.5:26379, [fd00::1]:6379)',
    ],
    [
      'store: { redis: { sentinel: { name: m, nodes: ["s1:26379"], password: a }, password: b } }',
      'store.redis.sentinel.password: set either this or store.redis.password, not both',
    ],
    [
      'store: { redis: { url: "redis://a:6379", tls: { ca: ./ca.pem } } }',
      'store.redis.tls: applies to a rediss:// url (this one is redis://)',
    ],
    [
      'store: { redis: { url: "rediss://a:6379", tls: { cafile: ./ca.pem } } }',
      'store.redis.tls.cafile: unknown key (did you mean "ca"?)',
    ],
    ['routes: [{ upstream: "http://a" }]', 'routes[0].prefix: is required'],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tls: { insecureSkipVerify: true } }]',
      'routes[0].tls: applies to an https:// upstream',
    ],
    [
      'routes: [{ prefix: /a, upstream: "https://a", tls: { cert: ./c.pem } }]',
      'routes[0].tls: cert and key go together (a client certificate needs both)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "https://a", tls: { servername: a } }]',
      'routes[0].tls.servername: unknown key (did you mean "serverName"?)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", stripPrefix: true, rewrite: { prefix: /v2 } }]',
      'routes[0].rewrite: use either stripPrefix or rewrite, not both',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rewrite: { prefix: v2 } }]',
      'routes[0].rewrite.prefix: must start with /',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rewrite: { prefix: /v2/../admin } }]',
      'routes[0].rewrite.prefix: must be a plain path (no //, .., %, \\)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tenantTypes: [] }]',
      'routes[0].tenantTypes: must name at least one tenant type (omit the key to admit any)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tenantTypes: [team] }]',
      'routes[0].tenantTypes[0]: must be one of orgtenant, usertenant',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", hosts: ["api.example.com:8080"] }]',
      'routes[0].hosts[0]: must be a host name, or *. and a host name (one wildcard label), without a port',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", hosts: ["api.*.example.com"] }]',
      'routes[0].hosts[0]: must be a host name, or *. and a host name (one wildcard label), without a port',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", hosts: [] }]',
      'routes[0].hosts: must name at least one host (omit the key to serve any host)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", cors: { origins: ["https://app.example.com/"] } }]',
      'routes[0].cors.origins[0]: must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", cors: { origins: ["https://App.example.com"] } }]',
      'routes[0].cors.origins[0]: must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", cors: { origins: ["null"] } }]',
      'routes[0].cors.origins[0]: must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", cors: { origins: ["*"], credentials: true } }]',
      'routes[0].cors.credentials: cannot be true with origins [*] (browsers refuse it): list the origins',
    ],
    [
      'cors: { origins: ["*", "https://app.example.com"] }',
      'cors.origins: * allows every origin: list it alone',
    ],
    ['cors: { origins: [] }', 'cors.origins: must name at least one origin'],
    [
      'cors: { origins: ["https://app.example.com"], maxAgeSeconds: 100000 }',
      'cors.maxAgeSeconds: must be at most 86400',
    ],
    [
      'cors: { origins: ["https://app.example.com"], methods: ["GET POST"] }',
      'cors.methods[0]: must be an HTTP method',
    ],
    [
      'routes: [{ prefix: /a, cors: { origins: ["https://app.example.com"] } }]',
      'routes[0].cors: applies where the gateway forwards (a route with an upstream); with forward-auth, the ingress answers CORS',
    ],
    ['routes: [{ prefix: a, upstream: "http://a" }]', 'routes[0].prefix: must start with /'],
    [
      'routes: [{ prefix: /a/../b, upstream: "http://a" }]',
      'routes[0].prefix: must be a plain path (no //, .., %, \\)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tenant: {} }]',
      'routes[0].tenant: must name at least one of header, path, query, host',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tenant: { path: /a/:id } }]',
      'routes[0].tenant.path: must contain the segment :tenant_id',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", tenant: { header: "X Tenant" } }]',
      'routes[0].tenant.header: must be an HTTP header name',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rateLimit: {} }]',
      'routes[0].rateLimit: must set perTenant, perUser or both (omit the key for no limit)',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rateLimit: { perTenant: { requestsPerSecond: 0, burst: 10 } } }]',
      'routes[0].rateLimit.perTenant.requestsPerSecond: must be at least 0.001',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rateLimit: { perUser: { requestsPerSecond: 5, burst: 0.5 } } }]',
      'routes[0].rateLimit.perUser.burst: must be at least 1',
    ],
    [
      'routes: [{ prefix: /a, upstream: "http://a", rateLimit: { perUser: { requestsPerSecond: 5 } } }]',
      'routes[0].rateLimit.perUser.burst: is required',
    ],
    [
      'routes: [{ prefix: /a, rateLimit: { perUser: { requestsPerSecond: 5, burst: 5 } } }]',
      'routes[0].rateLimit: applies where the gateway forwards (a route with an upstream); `/auth/verify` does not count requests',
    ],
    ['identityHeaders: { tenantId: X-Who, userId: x-who }', 'identityHeaders: names must differ'],
    ['- listen', '(top level): must be a mapping of keys'],
    ['just words', '(top level): must be a mapping of keys'],
  ])('%s', (text, problem) => {
    expect(problemsOf(text)).toEqual([problem]);
  });

  it('reports several problems together, each on its own line', () => {
    const text = [
      'listen: { port: eighty }',
      'lisen: { port: 80 }',
      'signup: { enabled: 3 }',
      'routes:',
      route('/orders'),
      route('/orders/', 'gopher://x'),
    ].join('\n');
    const problems = problemsOf(text);
    expect(problems).toHaveLength(5);
    expect(problems).toEqual(
      expect.arrayContaining([
        'listen.port: must be a number, not a string',
        'lisen: unknown key (did you mean "listen"?)',
        'signup.enabled: must be a boolean, not a number',
        'routes[1].upstream: must be an http(s) URL',
        'routes[1].prefix: duplicates routes[0].prefix',
      ]),
    );
  });

  it('never echoes a refused value (it may be a secret from the environment)', () => {
    const problems = problemsOf('store: { redis: { url: "${REDIS_URL}" } }', {
      REDIS_URL: 'http://user:s3cret-pass@cache:6379',
    });
    expect(problems).toEqual(['store.redis.url: must be a redis:// or rediss:// URL']);
    expect(problems.join('\n')).not.toContain('s3cret-pass');
  });
});

describe('unknown keys', () => {
  it('at the top level, with the nearest known key', () => {
    expect(problemsOf('lissen: { port: 80 }')).toEqual([
      'lissen: unknown key (did you mean "listen"?)',
    ]);
  });

  it('nested in a mapping', () => {
    expect(problemsOf('tokens: { isuer: me }')).toEqual([
      'tokens.isuer: unknown key (did you mean "issuer"?)',
    ]);
    expect(problemsOf('store: { redis: { url: "redis://r", keyprefix: "x:" } }')).toEqual([
      'store.redis.keyprefix: unknown key (did you mean "keyPrefix"?)',
    ]);
  });

  it('inside list items', () => {
    const text = ['routes:', route('/a'), '  - { prefix: /b, upstream: "http://b", timout: 5 }'];
    expect(problemsOf(text.join('\n'))).toEqual([
      'routes[1].timout: unknown key (did you mean "timeoutMs"?)',
    ]);
    expect(
      problemsOf('routes: [{ prefix: /a, upstream: "http://a", tenant: { heder: X-T } }]'),
    ).toEqual([
      'routes[0].tenant.heder: unknown key (did you mean "header"?)',
      'routes[0].tenant: must name at least one of header, path, query, host',
    ]);
  });

  it('without a suggestion when nothing is close', () => {
    expect(problemsOf('zzzqqq: 1')).toEqual(['zzzqqq: unknown key']);
  });

  it('every unknown key of one mapping', () => {
    expect(problemsOf('listen: { prot: 1, hots: x }')).toEqual([
      'listen.prot: unknown key (did you mean "port"?)',
      'listen.hots: unknown key (did you mean "host"?)',
    ]);
  });
});

describe('${ENV} expansion', () => {
  it('replaces a set variable', () => {
    const config = parseConfigText('tokens: { issuer: "${ISSUER}" }', SOURCE, { ISSUER: 'acme' });
    expect(config.tokens.issuer).toBe('acme');
  });

  it('expands inside a longer value, several times', () => {
    const config = parseConfigText(
      'store: { redis: { url: "redis://${HOST}:${PORT}/0" } }',
      SOURCE,
      { HOST: 'cache', PORT: '6380' },
    );
    expect(config.store.redis?.url).toBe('redis://cache:6380/0');
  });

  it('reports an unset variable by key path and name, once', () => {
    expect(problemsOf('tokens: { issuer: "${NOT_SET_ANYWHERE}" }')).toEqual([
      'tokens.issuer: environment variable NOT_SET_ANYWHERE is not set',
    ]);
  });

  it('treats an empty variable as unset', () => {
    expect(problemsOf('tokens: { audience: "${EMPTY}" }', { EMPTY: '' })).toEqual([
      'tokens.audience: environment variable EMPTY is not set',
    ]);
  });

  it('uses the default when the variable is unset or empty, not when it is set', () => {
    const text = 'tokens: { issuer: "${ISS:-fallback-issuer}" }';
    expect(parseConfigText(text, SOURCE, {}).tokens.issuer).toBe('fallback-issuer');
    expect(parseConfigText(text, SOURCE, { ISS: '' }).tokens.issuer).toBe('fallback-issuer');
    expect(parseConfigText(text, SOURCE, { ISS: 'set' }).tokens.issuer).toBe('set');
  });

  it('keeps $${ as a literal ${', () => {
    const config = parseConfigText('tokens: { issuer: "cost-$${HOME}" }', SOURCE, {
      HOME: '/root',
    });
    expect(config.tokens.issuer).toBe('cost-${HOME}');
  });

  it('reports a malformed reference', () => {
    expect(problemsOf('tokens: { issuer: "${1BAD}" }')).toEqual([
      'tokens.issuer: malformed reference ${1BAD} (use ${NAME} or ${NAME:-default})',
    ]);
  });

  it('turns numbers and booleans from the environment into numbers and booleans', () => {
    const text = [
      'listen:',
      '  port: ${PORT}',
      'passwords: { bcryptCost: "${COST:-6}" }',
      'signup: { enabled: "${SIGNUP}" }',
      'tracing: { sampleRatio: "${RATIO}" }',
    ].join('\n');
    const config = parseConfigText(text, SOURCE, { PORT: '9999', SIGNUP: 'true', RATIO: '0.25' });
    expect(config.tracing.sampleRatio).toBe(0.25);
    expect(config.listen.port).toBe(9999);
    expect(config.passwords.bcryptCost).toBe(6);
    expect(config.signup.enabled).toBe(true);
  });

  it('checks a value from the environment like any other', () => {
    expect(problemsOf('listen:\n  port: ${PORT}', { PORT: 'eighty' })).toEqual([
      'listen.port: must be a number, not a string',
    ]);
  });

  it('never lets a value change the structure of the document', () => {
    const config = parseConfigText('tokens: { issuer: "${ISS}" }', SOURCE, {
      ISS: 'x\naudience: evil',
    });
    expect(config.tokens.issuer).toBe('x\naudience: evil');
    expect(config.tokens.audience).toBe('tenant-api');
  });

  it('reports expansion problems together with schema problems', () => {
    expect(problemsOf('tokens: { issuer: "${UNSET_ISS}" }\nlisen: 1')).toEqual([
      'tokens.issuer: environment variable UNSET_ISS is not set',
      'lisen: unknown key (did you mean "listen"?)',
    ]);
  });

  it('explains an unquoted reference inside a flow mapping', () => {
    const problems = problemsOf('listen: { port: ${PORT} }', { PORT: '80' });
    expect(problems[0]).toMatch(/^YAML: .*line 1, column \d+/);
    expect(problems[0]).toContain('quote a ${VAR} reference');
  });
});

describe('defaults', () => {
  it('fills every default into an empty file', () => {
    const config = parseConfigText('', SOURCE, {});
    expect(config).toEqual({
      listen: { host: '0.0.0.0', port: 8080, opsEndpoints: false, http2: false },
      store: {},
      tokens: {
        issuer: 'tenant-gateway',
        audience: 'tenant-api',
        ttlSeconds: 3600,
        algorithms: ['EdDSA', 'ES256'],
        clockSkewSeconds: 30,
        refresh: { enabled: false, ttlSeconds: 1_209_600, absoluteTtlSeconds: 7_776_000 },
      },
      revocation: { mode: 'lease', leaseMs: 2000 },
      signup: { enabled: false, cloudRegion: 'local' },
      mfa: {
        totp: { enabled: false },
        passkeys: { enabled: false, rpName: 'tenant-gateway' },
        requiredForAdmins: false,
      },
      passwords: { bcryptCost: 10 },
      rateLimits: { reconcileIntervalMs: 500 },
      limits: {
        login: {
          perEmail: 10,
          perIp: 100,
          windowSeconds: 900,
          maxQueuedPerEmail: 4,
          maxQueuedPerIp: 8,
        },
        signup: { perIp: 20, windowSeconds: 3600 },
        ssoLogin: { perIp: 60, windowSeconds: 600 },
        exchange: { perIp: 60, windowSeconds: 60 },
        passwordReset: { perEmail: 3, perIp: 30, windowSeconds: 3600 },
        secondFactor: { perUser: 5, windowSeconds: 900 },
        bodyBytes: 16384,
        requestTimeoutMs: 0,
      },
      audit: { maxEventsPerStream: 10000 },
      server: {
        keepAliveTimeoutMs: 65000,
        headersTimeoutMs: 60000,
        requestBodyIdleTimeoutMs: 60000,
        http2MaxConcurrentStreams: 128,
      },
      trustedProxies: [],
      stripHeaders: { add: [], keep: [] },
      identityHeaders: {
        tenantId: 'X-Tenant-Id',
        tenantType: 'X-Tenant-Type',
        userId: 'X-User-Id',
        userEmail: 'X-User-Email',
        scope: 'X-Scope',
        clientId: 'X-Client-Id',
      },
      routes: [],
      authorization: { roles: { admin: [], member: [] } },
      apiKeys: { enabled: false, header: 'X-API-Key' },
      sso: {
        enabled: false,
        redirectUris: [],
        allowPrivateIssuers: false,
        failureCacheSeconds: 30,
        timeoutMs: 5000,
        keysMaxAgeSeconds: 600,
        unknownKeyCooldownSeconds: 30,
        maxProviders: 1000,
      },
      sessions: {
        enabled: false,
        cookie: { secure: true },
        idleTimeoutSeconds: 28_800,
        absoluteTimeoutSeconds: 604_800,
        returnHosts: [],
      },
      console: { enabled: false },
      log: { level: 'info', pretty: false, buffer: { bytes: 8192, flushMs: 1000 } },
      tracing: {
        enabled: false,
        otlpEndpoint: 'http://localhost:4318/v1/traces',
        serviceName: 'tenant-gateway',
        sampleRatio: 0.1,
      },
      readiness: { requireStore: false },
      shutdown: { drainSeconds: 10 },
    });
  });

  it('fills defaults inside partly given sections and list items', () => {
    const config = parseConfigText(
      [
        'listen: { port: 8081 }',
        'admin: { port: 9091 }',
        'store: { redis: { url: "redis://cache:6379/2" } }',
        'limits: { login: { perEmail: 3 } }',
        'routes:',
        route('/orders'),
      ].join('\n'),
      SOURCE,
      {},
    );
    expect(config.listen).toEqual({
      host: '0.0.0.0',
      port: 8081,
      opsEndpoints: false,
      http2: false,
    });
    expect(config.admin).toEqual({ host: '0.0.0.0', port: 9091, configReload: false });
    expect(config.store.redis).toEqual({
      url: 'redis://cache:6379/2',
      keyPrefix: 'tg:',
      commandTimeoutMs: 1000,
      connectTimeoutMs: 5000,
    });
    expect(config.limits.login).toEqual({
      perEmail: 3,
      perIp: 100,
      windowSeconds: 900,
      maxQueuedPerEmail: 4,
      maxQueuedPerIp: 8,
    });
    expect(config.routes).toEqual([
      {
        prefix: '/orders',
        upstream: 'http://127.0.0.1:9001',
        timeoutMs: 30000,
        bodyIdleTimeoutMs: 300000,
        protocol: 'http1',
        auth: 'bearer',
        stripAuthorization: true,
        stripPrefix: false,
      },
    ]);
  });

  it('built-in defaults: in-memory store, no routes, ephemeral key', () => {
    const { config, files } = defaultConfig();
    expect(files).toEqual([]);
    expect(config.store.redis).toBeUndefined();
    expect(config.routes).toEqual([]);
    expect(config.tokens.keys).toBeUndefined();
    expect(config.seed).toBeUndefined();
  });
});

describe('paths', () => {
  it('resolves relative seed and tokens.keys against the config file folder', () => {
    const config = parseConfigText(
      'seed: ./seed.yaml\ntokens: { keys: ../keys }',
      '/etc/tenant-gateway/gateway.yaml',
      {},
    );
    expect(config.seed).toBe('/etc/tenant-gateway/seed.yaml');
    expect(config.tokens.keys).toBe('/etc/keys');
  });

  it('refuses a store TLS CA it cannot read, by key path', () => {
    expect(
      problemsOf('store: { redis: { url: "rediss://r:6380", tls: { ca: ./no-such-ca.pem } } }'),
    ).toEqual(['store.redis.tls.ca: cannot read /etc/tenant-gateway/no-such-ca.pem']);
  });

  it('reads the Sentinel and Cluster shapes, with the TLS CA relative to the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-redis-tls-'));
    writeFileSync(join(dir, 'redis-ca.pem'), 'a CA, read when the store connects');
    const source = join(dir, 'gateway.yaml');
    const sentinel = parseConfigText(
      [
        'store:',
        '  redis:',
        '    sentinel: { name: mymaster, nodes: ["10.0.0.5:26379", "[fd00::1]:26379"], sentinelPassword: s }',
        '    username: gateway',
        '    password: p',
        '    tls: { ca: ./redis-ca.pem, servername: redis.internal }',
      ].join('\n'),
      source,
      {},
    );
    expect(sentinel.store.redis).toEqual({
      sentinel: {
        name: 'mymaster',
        nodes: ['10.0.0.5:26379', '[fd00::1]:26379'],
        sentinelPassword: 's',
      },
      username: 'gateway',
      password: 'p',
      tls: { ca: join(dir, 'redis-ca.pem'), servername: 'redis.internal' },
      keyPrefix: 'tg:',
      commandTimeoutMs: 1000,
      connectTimeoutMs: 5000,
    });
    const cluster = parseConfigText(
      'store: { redis: { cluster: { nodes: ["c1:7000", "c2:7000"] } } }',
      SOURCE,
      {},
    );
    expect(cluster.store.redis?.cluster).toEqual({ nodes: ['c1:7000', 'c2:7000'] });
  });

  it('a route without upstream is a forward-auth-only route', () => {
    const config = parseConfigText('routes: [{ prefix: /a, tenant: { header: X-T } }]', SOURCE, {});
    expect(config.routes[0]?.upstream).toBeUndefined();
  });

  it('names a TLS file it cannot read, relative to the config file', () => {
    expect(() =>
      parseConfigText(
        'routes: [{ prefix: /a, upstream: "https://a", tls: { ca: ./no-such-ca.pem } }]',
        SOURCE,
        {},
      ),
    ).toThrow('routes[0].tls.ca: cannot read /etc/tenant-gateway/no-such-ca.pem');
  });

  it('names an unreadable TLS file together with unset variables and bad keys (one run, every problem)', () => {
    const text = [
      'store: { redis: { url: "redis://:${REDIS_PASSWORD}@redis:6379/0", tls: { ca: ./no-redis-ca.pem } } }',
      'routes:',
      '  - { prefix: /a, upstream: "https://a", tls: { ca: ./no-such-ca.pem, cert: "${CERT}", key: ./k.pem } }',
      'signup: { enabled: maybe }',
      'lisen: {}',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'store.redis.url: environment variable REDIS_PASSWORD is not set',
      'routes[0].tls.cert: environment variable CERT is not set',
      'store.redis.tls: applies to a rediss:// url (this one is redis://)',
      'signup.enabled: must be a boolean, not a string',
      'lisen: unknown key (did you mean "listen"?)',
      // store.redis.tls.ca is not looked for: its block is refused already.
      'routes[0].tls.ca: cannot read /etc/tenant-gateway/no-such-ca.pem',
      // routes[0].tls.cert is not looked for: its variable is unset, already said.
      'routes[0].tls.key: cannot read /etc/tenant-gateway/k.pem',
    ]);
  });

  it('keeps absolute paths', () => {
    const config = parseConfigText('seed: /srv/seed.yaml\ntokens: { keys: /run/keys }', SOURCE, {});
    expect(config.seed).toBe('/srv/seed.yaml');
    expect(config.tokens.keys).toBe('/run/keys');
  });

  it('validateConfig resolves against the folder it is given', () => {
    const config = validateConfig({ seed: 'data/seed.yaml' }, '/opt/gw', 'test');
    expect(config.seed).toBe('/opt/gw/data/seed.yaml');
  });
});

describe('duplicate route prefixes', () => {
  it('refuses the same prefix twice, trailing slash or not', () => {
    const text = ['routes:', route('/orders'), route('/billing'), route('/orders/')].join('\n');
    expect(problemsOf(text)).toEqual(['routes[2].prefix: duplicates routes[0].prefix']);
  });

  it('refuses the same prefix twice for one host, in any letter case', () => {
    const text = [
      'routes:',
      '  - { prefix: /orders, upstream: "http://a", hosts: [api.example.com, "*.example.com"] }',
      '  - { prefix: /orders, upstream: "http://b", hosts: [shop.example.com] }',
      '  - { prefix: /orders/, upstream: "http://c", hosts: [API.example.com.] }',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'routes[2].prefix: duplicates routes[0].prefix for host api.example.com',
    ]);
  });

  it('accepts one prefix for other hosts, and once for any host; names lower-cased', () => {
    const text = [
      'routes:',
      '  - { prefix: /orders, upstream: "http://a", hosts: [API.Example.com.] }',
      '  - { prefix: /orders, upstream: "http://b", hosts: ["*.example.com"] }',
      route('/orders'),
    ].join('\n');
    expect(parseConfigText(text, SOURCE, {}).routes.map((r) => r.hosts)).toEqual([
      ['api.example.com'],
      ['*.example.com'],
      undefined,
    ]);
  });

  it('accepts nested prefixes (longest wins at run time)', () => {
    const text = ['routes:', route('/orders'), route('/orders/archive')].join('\n');
    expect(parseConfigText(text, SOURCE, {}).routes.map((r) => r.prefix)).toEqual([
      '/orders',
      '/orders/archive',
    ]);
  });
});

describe("the gateway's own paths", () => {
  it('refuses a route under /1, /.well-known or /auth/verify, and allows a catch-all /', () => {
    const text = [
      'routes:',
      route('/1/users'),
      route('/.well-known'),
      route('/auth/verify/x'),
      route('/'),
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      "routes[0].prefix: is reserved for the gateway's own endpoints (/1, /.well-known, /auth/verify)",
      "routes[1].prefix: is reserved for the gateway's own endpoints (/1, /.well-known, /auth/verify)",
      "routes[2].prefix: is reserved for the gateway's own endpoints (/1, /.well-known, /auth/verify)",
    ]);
  });

  const OPS_SHADOW =
    'is a path the gateway answers itself with listen.opsEndpoints (/healthz, /readyz, /metrics, in any letter case): the upstream would not see it; serve them on admin instead, or move the route';

  it('with listen.opsEndpoints, refuses a route whose prefix is a probe path, in any case, with or without a trailing slash', () => {
    const text = [
      'listen: { port: 8080, opsEndpoints: true }',
      'routes:',
      route('/orders'),
      route('/healthz'),
      route('/readyz/'),
      route('/Metrics'),
      route('/HEALTHZ/'),
      route('/metricſ'), // a long s: Java's equalsIgnoreCase reads it as /metrics
      '  - { prefix: /metrics, hosts: [api.example.com], upstream: "http://127.0.0.1:9001" }',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      `routes[1].prefix: ${OPS_SHADOW}`,
      `routes[2].prefix: ${OPS_SHADOW}`,
      `routes[3].prefix: ${OPS_SHADOW}`,
      `routes[4].prefix: ${OPS_SHADOW}`,
      `routes[5].prefix: ${OPS_SHADOW}`,
      `routes[6].prefix: ${OPS_SHADOW}`,
    ]);
  });

  it('with listen.opsEndpoints, allows what they do not shadow: deeper paths, /config/reload, forward-auth-only routes, a catch-all /', () => {
    const text = [
      'listen: { port: 8080, opsEndpoints: "true" }',
      'routes:',
      route('/metrics/tenants'),
      route('/healthzx'),
      route('/config/reload'),
      '  - { prefix: /readyz }',
      route('/'),
    ].join('\n');
    const config = parseConfigText(text, SOURCE, {});
    expect(config.listen.opsEndpoints).toBe(true);
    expect(config.routes).toHaveLength(5);
  });

  it('without listen.opsEndpoints (the default) the probe paths are route prefixes like any other', () => {
    const text = ['routes:', route('/healthz'), route('/readyz'), route('/metrics')].join('\n');
    const config = parseConfigText(text, SOURCE, {});
    expect(config.listen.opsEndpoints).toBe(false);
    expect(config.admin).toBeUndefined();
    expect(config.routes.map((r) => r.prefix)).toEqual(['/healthz', '/readyz', '/metrics']);
  });
});

describe('YAML problems are ConfigErrors, with a position', () => {
  it('a syntax error', () => {
    const problems = problemsOf('listen: { port: 1\nroutes: [');
    expect(problems.length).toBeGreaterThan(0);
    for (const p of problems) expect(p).toMatch(/^YAML: .+ at line \d+, column \d+$/);
  });

  it('a duplicate key', () => {
    expect(problemsOf('listen: { port: 1 }\nsignup: {}\nlisten: { port: 2 }')).toEqual([
      'YAML: Map keys must be unique at line 3, column 1',
    ]);
  });

  it('a duplicate key in a nested mapping', () => {
    const problems = problemsOf('tokens:\n  issuer: a\n  issuer: b');
    expect(problems).toEqual(['YAML: Map keys must be unique at line 3, column 3']);
  });

  it('more than one document', () => {
    expect(problemsOf('listen: {}\n---\nsignup: {}')[0]).toMatch(/^YAML: .*multiple documents/);
  });

  it('an alias bomb', () => {
    const text = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'YAML: Excessive alias count indicates a resource exhaustion attack',
    ]);
  });
});

describe('loadConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a file and resolves its relative paths against its folder', async () => {
    mkdirSync(join(dir, 'etc'), { recursive: true });
    const file = join(dir, 'etc', 'gw.yaml');
    writeFileSync(file, 'seed: seed.yaml\ntokens: { keys: "${KEYS_DIR:-./keys}" }\n');
    const loaded = await loadConfigFile(relative(process.cwd(), file), {});
    expect(loaded.files).toEqual([file]);
    expect(loaded.config.seed).toBe(join(dir, 'etc', 'seed.yaml'));
    expect(loaded.config.tokens.keys).toBe(join(dir, 'etc', 'keys'));
  });

  it('reads the environment it is given', async () => {
    const file = join(dir, 'env.yaml');
    writeFileSync(file, 'listen:\n  port: ${GW_PORT}\n');
    expect((await loadConfigFile(file, { GW_PORT: '7000' })).config.listen.port).toBe(7000);
  });

  it('a missing file is a ConfigError naming it', async () => {
    const file = join(dir, 'nope.yaml');
    const err = await loadConfigFile(file, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual(['cannot read the file: ENOENT']);
    expect((err as ConfigError).message).toContain(file);
  });

  it('layers files: mappings merge key by key, a later value replaces (the store swapped, routes kept)', async () => {
    const base = join(dir, 'layer-base.yaml');
    const store = join(dir, 'layer-store.yaml');
    writeFileSync(
      base,
      [
        'store: { redis: { url: "redis://redis:6379/0", keyPrefix: "gw:" } }',
        'trustedProxies: [10.1.0.0/16]',
        'routes: [{ prefix: /orders, upstream: "http://orders:9001" }]',
      ].join('\n'),
    );
    writeFileSync(
      store,
      [
        'store:',
        '  redis:',
        '    url: null',
        '    sentinel: { name: mymaster, nodes: ["s1:26379", "s2:26379"] }',
        'trustedProxies: [10.2.0.0/16]',
      ].join('\n'),
    );
    const loaded = await loadConfigFiles([base, store], {});
    expect(loaded.files).toEqual([base, store]);
    expect(loaded.config.store.redis).toMatchObject({
      keyPrefix: 'gw:',
      sentinel: { name: 'mymaster', nodes: ['s1:26379', 's2:26379'] },
    });
    expect(loaded.config.store.redis?.url).toBeUndefined();
    expect(loaded.config.trustedProxies).toEqual(['10.2.0.0/16']);
    expect(loaded.config.routes.map((r) => r.prefix)).toEqual(['/orders']);
  });

  it('names every layer in the error of an invalid result', async () => {
    const base = join(dir, 'layer-a.yaml');
    const over = join(dir, 'layer-b.yaml');
    writeFileSync(base, 'store: { redis: { url: "redis://redis:6379/0" } }\n');
    writeFileSync(over, 'store: { redis: { sentinel: { name: m, nodes: ["s1:26379"] } } }\n');
    const err = await loadConfigFiles([base, over], {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toContain(`${base} + ${over}`);
    expect((err as ConfigError).problems.join('\n')).toMatch(/^store\.redis/m);
  });

  it('names the file in the error of an invalid one', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'routes: [{ prefix: /a, upstream: nowhere }]\n');
    const err = await loadConfigFile(file, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(
      `invalid configuration ${file}:\n  routes[0].upstream: must be an http(s) URL`,
    );
  });
});

describe('apiKeys.header', () => {
  it('may not be a header the gateway sets or reads for another purpose', () => {
    for (const header of ['Authorization', 'X-User-Id', 'x_tenant_id', 'Cookie']) {
      expect(() =>
        parseConfigText(`apiKeys: { enabled: true, header: "${header}" }\n`, SOURCE, {}),
      ).toThrow(/apiKeys\.header: .* another purpose/);
    }
    expect(
      parseConfigText('apiKeys: { enabled: true, header: X-Partner-Key }\n', SOURCE, {}).apiKeys,
    ).toEqual({ enabled: true, header: 'X-Partner-Key' });
  });
});

describe('sso.dnsServers (issue 42)', () => {
  it('takes IP addresses, with a port (an IPv6 one in brackets)', () => {
    const servers = ['127.0.0.1', '127.0.0.1:5353', '::1', '[::1]:5353'];
    const config = parseConfigText(`sso: { dnsServers: ${JSON.stringify(servers)} }`, SOURCE, {});
    expect(config.sso.dnsServers).toEqual(servers);
  });

  it('refuses a host name, a bad port, or an empty list', () => {
    for (const bad of ['"dns.example"', '"127.0.0.1:0"', '"127.0.0.1:70000"', '"::1:53x"']) {
      const problems = problemsOf(`sso: { dnsServers: [${bad}] }`);
      expect(problems.join('\n'), bad).toMatch(/sso\.dnsServers\[0\]: must be an IP address/);
    }
    expect(problemsOf('sso: { dnsServers: [] }').join('\n')).toMatch(/sso\.dnsServers/);
  });
});

describe('routes[].auth: session (issue 44)', () => {
  const sessionRoutes = [
    'routes:',
    '  - { prefix: /app, upstream: "http://a:1", auth: session }',
    '  - { prefix: /api, upstream: "http://a:1" }',
    '  - { prefix: /web, upstream: "http://a:1", auth: session }',
  ].join('\n');

  it('needs sessions.enabled: each such route is named', () => {
    expect(problemsOf(`${sessionRoutes}\n`)).toEqual([
      expect.stringMatching(/^routes\[0\]\.auth: session needs sessions\.enabled: true/),
      expect.stringMatching(/^routes\[2\]\.auth: session needs sessions\.enabled: true/),
    ]);
    expect(problemsOf(`${sessionRoutes}\nsessions: { enabled: false }\n`)).toHaveLength(2);
  });

  it('is taken with sessions on', () => {
    const config = parseConfigText(`${sessionRoutes}\nsessions: { enabled: true }\n`, SOURCE, {});
    expect(config.routes.map((r) => r.auth)).toEqual(['session', 'bearer', 'session']);
  });

  it('is one of bearer, session and none', () => {
    const problems = problemsOf(
      'routes:\n  - { prefix: /a, upstream: "http://a:1", auth: cookie }\n',
    );
    expect(problems).toEqual(['routes[0].auth: must be one of bearer, session, none']);
  });
});
