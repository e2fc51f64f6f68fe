/**
 * The header policy promises what the upstream sees: a client's identity
 * headers are gone in every spelling (any case, `_` for `-`) and only the
 * verified ones are injected; identity-like headers of other auth proxies are
 * stripped (config `stripHeaders` adds to and keeps from that list); hop-by-hop
 * headers, headers named in `Connection`, forward-auth inputs and the
 * client's framing never cross; `X-Forwarded-*` is believed only from a
 * trusted proxy. `checkFraming` refuses what cannot be forwarded unambiguously.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/credentials/authenticate.js';
import { GatewayError } from '../../src/errors.js';
import {
  createHeaderPolicy,
  type HeaderPolicy,
  type IdentityHeaderNames,
  type StripHeaders,
} from '../../src/proxy/decide/header-policy.js';
import { createTrustCheck } from '../../src/proxy/decide/trusted-proxies.js';

const NAMES: IdentityHeaderNames = {
  tenantId: 'X-Tenant-Id',
  tenantType: 'X-Tenant-Type',
  userId: 'X-User-Id',
  userEmail: 'X-User-Email',
  scope: 'X-Scope',
  clientId: 'X-Client-Id',
};
const MACHINE: Principal = {
  kind: 'client',
  userId: 'tgc_machine',
  email: '',
  clientId: 'tgc_machine',
  tenantId: 'acme',
  tenantType: 'orgtenant',
  scopes: ['catalog:read'],
  claims: {
    iss: 'gw',
    aud: 'api',
    sub: 'tgc_machine',
    client_id: 'tgc_machine',
    cg: 3,
    tenant_id: 'acme',
    tenant_type: 'orgtenant',
    email: '',
    sv: 0,
    mg: 0,
    scope: 'catalog:read',
    jti: 'j-machine',
    iat: 0,
    exp: 9_999_999_999,
  },
};
const PROXY = '10.0.0.7';
const CLIENT = '203.0.113.9';
const trusted = createTrustCheck(['10.0.0.0/8']);

const ALICE: Principal = {
  kind: 'user',
  userId: 'u-alice',
  email: 'alice@example.com',
  tenantId: 'acme',
  tenantType: 'orgtenant',
  scopes: ['catalog:read', 'catalog:write'],
  claims: {
    iss: 'gw',
    aud: 'api',
    sub: 'u-alice',
    tenant_id: 'acme',
    tenant_type: 'orgtenant',
    email: 'alice@example.com',
    sv: 1,
    mg: 1,
    scope: 'catalog:read catalog:write',
    jti: 'j1',
    iat: 0,
    exp: 60,
  },
};

/**
 * A request as Node hands it over: `rawHeaders` as sent, `headers` with names
 * lower-cased and repeated lines joined with ", " (a second Host line is
 * dropped there, as Node drops it).
 */
function incoming(
  lines: readonly (readonly [string, string])[],
  peer: string | undefined = CLIENT,
  tls = false,
): IncomingMessage {
  const socket = { remoteAddress: peer, encrypted: tls ? true : undefined };
  const req = new IncomingMessage(socket as unknown as Socket);
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of lines) {
    const key = name.toLowerCase();
    const prior = headers[key];
    if (prior === undefined) headers[key] = value;
    else if (key !== 'host') headers[key] = `${String(prior)}, ${value}`;
  }
  req.headers = headers;
  req.rawHeaders = lines.flatMap(([name, value]) => [name, value]);
  return req;
}

interface RewriteOptions {
  principal?: Principal;
  requestId?: string;
  stripAuthorization?: boolean;
  upgrade?: boolean;
}

/** The headers the upstream would get for `req`. */
function forwarded(
  policy: HeaderPolicy,
  req: IncomingMessage,
  options: RewriteOptions = {},
): IncomingHttpHeaders {
  policy.rewrite(req, options.principal, {
    requestId: options.requestId ?? 'req-1',
    stripAuthorization: options.stripAuthorization ?? false,
    upgrade: options.upgrade ?? false,
  });
  return req.headers;
}

/** The header names in `headers` an upstream framework would fold into `name`. */
function spellingsOf(headers: IncomingHttpHeaders, name: string): string[] {
  const wanted = name.toLowerCase().replace(/_/g, '-');
  return Object.keys(headers).filter((k) => k.toLowerCase().replace(/_/g, '-') === wanted);
}

/** `X-Tenant-Id` in each mix of `-` and `_`, each in lower, upper and its own case. */
function spellings(name: string): string[] {
  const parts = name.split('-');
  let joined = [parts[0] as string];
  for (const part of parts.slice(1)) {
    joined = joined.flatMap((head) => [`${head}-${part}`, `${head}_${part}`]);
  }
  return joined.flatMap((s) => [s, s.toLowerCase(), s.toUpperCase()]);
}

function refusal(run: () => void): GatewayError | undefined {
  try {
    run();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  return undefined;
}

describe('identity headers', () => {
  const policy = createHeaderPolicy(NAMES, trusted);
  const forged = Object.values(NAMES).flatMap((name) =>
    spellings(name).map((s) => [s, 'globex'] as const),
  );

  it('strips every spelling a client sends and injects only the verified values', () => {
    const out = forwarded(policy, incoming([['Host', 'gw'], ...forged]), { principal: ALICE });
    const expected: Record<string, string> = {
      'x-tenant-id': 'acme',
      'x-tenant-type': 'orgtenant',
      'x-user-id': 'u-alice',
      'x-user-email': 'alice@example.com',
      'x-scope': 'catalog:read catalog:write',
    };
    for (const [name, value] of Object.entries(expected)) {
      expect(spellingsOf(out, name)).toEqual([name]);
      expect(out[name]).toBe(value);
    }
  });

  it('strips them without injecting any for an anonymous request', () => {
    const out = forwarded(policy, incoming([['Host', 'gw'], ...forged]));
    for (const name of Object.values(NAMES)) expect(spellingsOf(out, name)).toEqual([]);
  });

  it('uses the configured names, in any spelling, for both the strip and the injection', () => {
    const renamed = createHeaderPolicy(
      {
        tenantId: 'X-Org-Id',
        tenantType: 'X-Org-Kind',
        userId: 'X-Subject',
        userEmail: 'X-Mail',
        scope: 'X-Grants',
        clientId: 'X-Machine',
      },
      trusted,
    );
    const out = forwarded(
      renamed,
      incoming([
        ['X_Org_Id', 'globex'],
        ['x-org_kind', 'usertenant'],
        ['X-SUBJECT', 'u-mallory'],
        ['x_mail', 'mallory@example.com'],
        ['X_Grants', 'everything'],
      ]),
      { principal: ALICE },
    );
    expect(spellingsOf(out, 'x-org-id')).toEqual(['x-org-id']);
    expect(out['x-org-id']).toBe('acme');
    expect(out['x-org-kind']).toBe('orgtenant');
    expect(out['x-subject']).toBe('u-alice');
    expect(out['x-mail']).toBe('alice@example.com');
    expect(spellingsOf(out, 'x-grants')).toEqual(['x-grants']);
    expect(out['x-grants']).toBe('catalog:read catalog:write');
    expect(spellingsOf(out, 'x-tenant-id')).toEqual([]);
  });

  it('lets a header through that only the default names would have made an identity header', () => {
    const renamed = createHeaderPolicy({ ...NAMES, tenantId: 'X-Org-Id' }, trusted);
    const out = forwarded(renamed, incoming([['X-Tenant-Id', 'globex']]), { principal: ALICE });
    expect(out['x-tenant-id']).toBe('globex');
    expect(out['x-org-id']).toBe('acme');
  });

  it('gives the verdict headers by their configured spelling, empty for an anonymous request', () => {
    expect(policy.identityHeaders(ALICE)).toEqual({
      'X-Tenant-Id': 'acme',
      'X-Tenant-Type': 'orgtenant',
      'X-User-Id': 'u-alice',
      'X-User-Email': 'alice@example.com',
      'X-Scope': 'catalog:read catalog:write',
      'X-Client-Id': '',
    });
    expect(policy.identityHeaders(undefined)).toEqual({
      'X-Tenant-Id': '',
      'X-Tenant-Type': '',
      'X-User-Id': '',
      'X-User-Email': '',
      'X-Scope': '',
      'X-Client-Id': '',
    });
    expect(policy.identityHeaders(MACHINE)).toEqual({
      'X-Tenant-Id': 'acme',
      'X-Tenant-Type': 'orgtenant',
      'X-User-Id': '',
      'X-User-Email': '',
      'X-Scope': 'catalog:read',
      'X-Client-Id': 'tgc_machine',
    });
  });

  it("sends a machine client's id, and no X-User-*, for a client token; strips forged ones", () => {
    const out = forwarded(
      policy,
      incoming([
        ['X-Client-Id', 'tgc_forged'],
        ['X-User-Id', 'u-mallory'],
        ['x_user_email', 'mallory@example.com'],
      ]),
      { principal: MACHINE },
    );
    expect(out['x-client-id']).toBe('tgc_machine');
    expect(out['x-tenant-id']).toBe('acme');
    expect(out['x-scope']).toBe('catalog:read');
    expect(spellingsOf(out, 'x-user-id')).toEqual([]);
    expect(spellingsOf(out, 'x-user-email')).toEqual([]);
    const anonymous = forwarded(policy, incoming([['x_client_id', 'tgc_forged']]));
    expect(spellingsOf(anonymous, 'x-client-id')).toEqual([]);
  });

  it('keeps deciding every spelling the same after many distinct names have been seen', () => {
    const busy = createHeaderPolicy(NAMES, trusted);
    for (let i = 0; i < 5000; i++) forwarded(busy, incoming([[`x-noise-${i}`, '1']]));
    const out = forwarded(busy, incoming([['x_user_id', 'u-mallory']]), { principal: ALICE });
    expect(spellingsOf(out, 'x-user-id')).toEqual(['x-user-id']);
    expect(out['x-user-id']).toBe('u-alice');
  });
});

describe('headers the gateway sets or that carry no weight', () => {
  const policy = createHeaderPolicy(NAMES, trusted);

  it("replaces the client's X-Request-Id in any spelling with the one given", () => {
    const out = forwarded(
      policy,
      incoming([
        ['X-Request-Id', 'forged'],
        ['x_request_id', 'forged-too'],
      ]),
      { requestId: 'req-42' },
    );
    expect(spellingsOf(out, 'x-request-id')).toEqual(['x-request-id']);
    expect(out['x-request-id']).toBe('req-42');
  });

  it.each([PROXY, CLIENT])('drops the forward-auth inputs, even from %s', (peer) => {
    const out = forwarded(
      policy,
      incoming(
        [
          ['X-Original-URI', '/admin'],
          ['X-Original-URL', 'http://gw/admin'],
          ['X-Original-Method', 'DELETE'],
          ['X-Forwarded-Uri', '/admin'],
          ['X_Forwarded_Method', 'DELETE'],
          ['Accept', 'application/json'],
        ],
        peer,
      ),
    );
    for (const name of [
      'x-original-uri',
      'x-original-url',
      'x-original-method',
      'x-forwarded-uri',
      'x-forwarded-method',
    ]) {
      expect(spellingsOf(out, name)).toEqual([]);
    }
    expect(out.accept).toBe('application/json');
  });

  it('drops hop-by-hop headers and Expect', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Connection', 'keep-alive'],
        ['Keep-Alive', 'timeout=5'],
        ['Proxy-Connection', 'keep-alive'],
        ['Proxy-Authorization', 'Basic Zm9vOmJhcg=='],
        ['TE', 'trailers'],
        ['Trailer', 'X-Checksum'],
        ['Upgrade', 'h2c'],
        ['Expect', '100-continue'],
        ['Proxy_Authorization', 'Basic Zm9vOmJhcg=='],
      ]),
    );
    for (const name of [
      'connection',
      'keep-alive',
      'proxy-connection',
      'proxy-authorization',
      'te',
      'trailer',
      'upgrade',
      'expect',
    ]) {
      expect(spellingsOf(out, name)).toEqual([]);
    }
  });

  it('drops every header the client names in Connection, in any spelling', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Connection', 'X-Debug, x_trace'],
        ['X-Debug', '1'],
        ['X_Debug', '1'],
        ['X-Trace', 'abc'],
        ['X-Other', 'kept'],
      ]),
    );
    expect(spellingsOf(out, 'x-debug')).toEqual([]);
    expect(spellingsOf(out, 'x-trace')).toEqual([]);
    expect(out['x-other']).toBe('kept');
  });

  it('passes ordinary headers through unchanged, underscores included', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Accept', 'application/json'],
        ['Cookie', 'a=1; b=2'],
        ['X_Custom_Thing', 'yes'],
        ['User-Agent', 'test/1'],
      ]),
    );
    expect(out).toMatchObject({
      accept: 'application/json',
      cookie: 'a=1; b=2',
      x_custom_thing: 'yes',
      'user-agent': 'test/1',
    });
  });

  it('removes Authorization only when the route says so', () => {
    const lines = [['Authorization', 'Bearer t0ken']] as const;
    expect(forwarded(policy, incoming(lines), { stripAuthorization: true }).authorization).toBe(
      undefined,
    );
    expect(forwarded(policy, incoming(lines), { stripAuthorization: false }).authorization).toBe(
      'Bearer t0ken',
    );
  });
});

describe('identity-like headers (stripHeaders)', () => {
  const identityLike: [string, string][] = [
    ['X-Forwarded-User', 'mallory'],
    ['x_forwarded_email', 'mallory@example.com'],
    ['X-Auth-Request-User', 'mallory'],
    ['Remote-User', 'mallory'],
    ['X-Amzn-Oidc-Data', 'jwt'],
    ['X-MS-Client-Principal-Name', 'mallory'],
    ['True-Client-IP', '1.2.3.4'],
    ['CF_Connecting_IP', '1.2.3.4'],
    ['X-SSL-Client-DN', 'CN=mallory'],
    ['X-Envoy-Original-Path', '/admin'],
  ];

  it('strips the default list in any spelling, prefixes included', () => {
    const out = forwarded(createHeaderPolicy(NAMES, trusted), incoming(identityLike));
    for (const [name] of identityLike) expect(spellingsOf(out, name)).toEqual([]);
  });

  it('strips the names `add` lists, exactly or by prefix, in any spelling', () => {
    const strip: StripHeaders = { add: ['X-Internal-*', 'X_Debug_User'], keep: [] };
    const out = forwarded(
      createHeaderPolicy(NAMES, trusted, strip),
      incoming([
        ['X-Internal-Role', 'admin'],
        ['x_internal_role', 'admin'],
        ['X-Internal-', 'x'],
        ['X-Debug-User', 'root'],
        ['x_debug_user', 'root'],
        ['X-Internalx', 'kept'],
        ['X-Debug-Users', 'kept'],
      ]),
    );
    expect(spellingsOf(out, 'x-internal-role')).toEqual([]);
    expect(spellingsOf(out, 'x-internal-')).toEqual([]);
    expect(spellingsOf(out, 'x-debug-user')).toEqual([]);
    expect(out['x-internalx']).toBe('kept');
    expect(out['x-debug-users']).toBe('kept');
  });

  it('without `add`, a name outside the default list passes', () => {
    const out = forwarded(createHeaderPolicy(NAMES, trusted), incoming([['X-Internal-Role', 'a']]));
    expect(out['x-internal-role']).toBe('a');
  });

  it('lets the names `keep` lists through, in any spelling, and strips the rest', () => {
    const strip: StripHeaders = { add: [], keep: ['X_Forwarded_User', 'x-auth-request-*'] };
    const out = forwarded(createHeaderPolicy(NAMES, trusted, strip), incoming(identityLike));
    expect(out['x-forwarded-user']).toBe('mallory');
    expect(out['x-auth-request-user']).toBe('mallory');
    const keptNames = ['x-forwarded-user', 'x-auth-request-user'];
    for (const [name] of identityLike.filter(([n]) => !keptNames.includes(n.toLowerCase()))) {
      expect(spellingsOf(out, name)).toEqual([]);
    }
  });

  it('never lets `keep` through an identity, forwarded, forward-auth or hop-by-hop header', () => {
    const strip: StripHeaders = {
      add: [],
      keep: ['X-Tenant-Id', 'X-Forwarded-Port', 'X-Original-URI', 'Proxy-Authorization'],
    };
    const out = forwarded(
      createHeaderPolicy(NAMES, trusted, strip),
      incoming([
        ['X_Tenant_Id', 'globex'],
        ['X-Forwarded-Port', '8443'],
        ['X-Original-URI', '/admin'],
        ['Proxy-Authorization', 'Basic x'],
      ]),
    );
    expect(spellingsOf(out, 'x-tenant-id')).toEqual([]);
    expect(spellingsOf(out, 'x-forwarded-port')).toEqual([]);
    expect(spellingsOf(out, 'x-original-uri')).toEqual([]);
    expect(spellingsOf(out, 'proxy-authorization')).toEqual([]);
  });
});

describe('framing', () => {
  const policy = createHeaderPolicy(NAMES, trusted);

  it('forwards a known length as Content-Length and nothing else', () => {
    const out = forwarded(policy, incoming([['Content-Length', '5']]));
    expect(out['content-length']).toBe('5');
    expect(out['transfer-encoding']).toBeUndefined();
  });

  it('forwards a chunked body as `chunked` whatever case the client used', () => {
    const out = forwarded(policy, incoming([['Transfer-Encoding', 'Chunked']]));
    expect(out['transfer-encoding']).toBe('chunked');
    expect(out['content-length']).toBeUndefined();
  });

  it('sends neither framing header for a request without a body', () => {
    const out = forwarded(policy, incoming([['Accept', '*/*']]));
    expect(out['content-length']).toBeUndefined();
    expect(out['transfer-encoding']).toBeUndefined();
  });

  it('never copies framing headers in `_` spellings', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Content_Length', '9999'],
        ['transfer_encoding', 'chunked'],
      ]),
    );
    expect(spellingsOf(out, 'content-length')).toEqual([]);
    expect(spellingsOf(out, 'transfer-encoding')).toEqual([]);
  });

  it('gives an upgrade no body and a clean Connection: upgrade, Upgrade: websocket', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Connection', 'Upgrade, X-Debug'],
        ['Upgrade', 'WebSocket'],
        ['X-Debug', '1'],
        ['Content-Length', '10'],
        ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
      ]),
      { upgrade: true },
    );
    expect(out.connection).toBe('upgrade');
    expect(out.upgrade).toBe('websocket');
    expect(out['content-length']).toBeUndefined();
    expect(out['transfer-encoding']).toBeUndefined();
    expect(out['x-debug']).toBeUndefined();
    expect(out['sec-websocket-key']).toBe('dGhlIHNhbXBsZSBub25jZQ==');
  });

  it('passes an upgrade to another protocol as sent, for the forwarder to refuse', () => {
    const out = forwarded(
      policy,
      incoming([
        ['Connection', 'Upgrade'],
        ['Upgrade', 'h2c'],
      ]),
      { upgrade: true },
    );
    expect(out.upgrade).toBe('h2c');
  });
});

describe('checkFraming', () => {
  const policy = createHeaderPolicy(NAMES, trusted);
  const check = (lines: [string, string][]) => refusal(() => policy.checkFraming(incoming(lines)));

  it.each([
    [[] as [string, string][]],
    [[['Transfer-Encoding', 'chunked']]],
    [[['Transfer-Encoding', 'CHUNKED']]],
    [[['Connection', 'keep-alive']]],
    [[['Connection', 'close']]],
    [[['Connection', 'Upgrade']]],
    [[['Connection', 'keep-alive, X-Debug']]],
  ] as [string, string][][][])('accepts %j', (lines) => {
    expect(check(lines)).toBeUndefined();
  });

  it.each([
    'gzip',
    'identity',
    'chunked;x=1',
    'chunked ;',
    'xchunked',
    '\xa0chunked',
    'chunked, chunked',
    'chunked;x, chunked',
    'gzip, chunked, gzip',
    ' , ',
  ])(
    'refuses Transfer-Encoding %j, whose body cannot be framed, and closes the connection',
    (encoding) => {
      const err = check([['Transfer-Encoding', encoding]]);
      expect(err?.code).toBe('invalid_request');
      expect(err?.status).toBe(400);
      expect(err?.headers).toEqual({ connection: 'close' });
    },
  );

  it.each([
    'gzip, chunked',
    'GZIP , Chunked',
    'deflate,\tidentity, chunked',
    'gzip;q=1,, chunked',
    'x-custom, chunked',
  ])(
    'answers Transfer-Encoding %j, a coding before a final chunked, 501 and closes the connection',
    (encoding) => {
      const err = check([['Transfer-Encoding', encoding]]);
      expect(err?.code).toBe('not_implemented');
      expect(err?.status).toBe(501);
      expect(err?.headers).toEqual({ connection: 'close' });
    },
  );

  it.each([
    'Content-Length',
    'transfer-encoding',
    'Host',
    'X-Tenant-Id',
    'x_user_id',
    'X-USER-EMAIL',
    'X-Tenant_Type',
    'X-Request-Id',
    'X-Forwarded-For',
    'X-Forwarded-Proto',
    'x_forwarded_host',
    'keep-alive, Content-Length',
  ])('refuses a Connection that names %s and closes the connection', (listed) => {
    const err = check([['Connection', listed]]);
    expect(err?.code).toBe('invalid_request');
    expect(err?.headers).toEqual({ connection: 'close' });
  });

  it('reads repeated Connection lines together', () => {
    const err = check([
      ['Connection', 'keep-alive'],
      ['Connection', 'Host'],
    ]);
    expect(err?.code).toBe('invalid_request');
  });
});

describe('X-Forwarded-*', () => {
  const policy = createHeaderPolicy(NAMES, trusted);
  const claimed: [string, string][] = [
    ['Host', 'gw.example.com'],
    ['X-Forwarded-For', '198.51.100.1'],
    ['X-Forwarded-Proto', 'https'],
    ['X-Forwarded-Host', 'tenant.example.com'],
    ['X-Forwarded-Port', '8443'],
    ['X-Forwarded-Prefix', '/admin'],
    ['X-Real-IP', '198.51.100.1'],
    ['Forwarded', 'for=198.51.100.1;host=tenant.example.com'],
  ];

  it('replaces what an untrusted client claims with what the connection shows', () => {
    const out = forwarded(policy, incoming(claimed, CLIENT));
    expect(out['x-forwarded-for']).toBe(CLIENT);
    expect(out['x-forwarded-proto']).toBe('http');
    expect(out['x-forwarded-host']).toBe('gw.example.com');
    for (const name of ['x-forwarded-port', 'x-forwarded-prefix', 'x-real-ip', 'forwarded']) {
      expect(spellingsOf(out, name)).toEqual([]);
    }
  });

  it('says https for a client on TLS', () => {
    const out = forwarded(policy, incoming([['Host', 'gw']], CLIENT, true));
    expect(out['x-forwarded-proto']).toBe('https');
  });

  it("believes a trusted proxy's For, Proto and Host, appending the proxy to For", () => {
    const out = forwarded(policy, incoming(claimed, PROXY));
    expect(out['x-forwarded-for']).toBe(`198.51.100.1, ${PROXY}`);
    expect(out['x-forwarded-proto']).toBe('https');
    expect(out['x-forwarded-host']).toBe('tenant.example.com');
  });

  it('trusts a proxy seen as an IPv4-mapped IPv6 address', () => {
    const out = forwarded(policy, incoming(claimed, `::ffff:${PROXY}`));
    expect(out['x-forwarded-for']).toBe(`198.51.100.1, ::ffff:${PROXY}`);
    expect(out['x-forwarded-host']).toBe('tenant.example.com');
  });

  it('fills in what a trusted proxy left out from the connection', () => {
    const out = forwarded(policy, incoming([['Host', 'gw']], PROXY));
    expect(out['x-forwarded-for']).toBe(PROXY);
    expect(out['x-forwarded-proto']).toBe('http');
    expect(out['x-forwarded-host']).toBe('gw');
  });

  it('does not read `_` spellings as X-Forwarded-*, even from a trusted proxy, and drops them', () => {
    const out = forwarded(
      policy,
      incoming(
        [
          ['Host', 'gw'],
          ['X_Forwarded_For', '198.51.100.1'],
          ['x_forwarded_proto', 'https'],
          ['X_Forwarded_Host', 'tenant.example.com'],
        ],
        PROXY,
      ),
    );
    expect(out['x-forwarded-for']).toBe(PROXY);
    expect(out['x-forwarded-proto']).toBe('http');
    expect(out['x-forwarded-host']).toBe('gw');
    expect(spellingsOf(out, 'x-forwarded-for')).toEqual(['x-forwarded-for']);
    expect(spellingsOf(out, 'x-forwarded-host')).toEqual(['x-forwarded-host']);
  });

  it('sets no X-Forwarded-Host for a request without a Host', () => {
    const out = forwarded(policy, incoming([['X-Forwarded-Host', 'tenant.example.com']], CLIENT));
    expect(out['x-forwarded-host']).toBeUndefined();
  });
});

describe('routingHosts', () => {
  const policy = createHeaderPolicy(NAMES, trusted);

  it('is the Host alone from an untrusted client', () => {
    const req = incoming(
      [
        ['Host', 'gw.example.com'],
        ['X-Forwarded-Host', 'tenant.example.com'],
      ],
      CLIENT,
    );
    expect(policy.routingHosts(req)).toEqual(['gw.example.com']);
  });

  it("adds each non-empty X-Forwarded-Host entry of a trusted proxy's", () => {
    const req = incoming(
      [
        ['host', 'gw.example.com'],
        ['X-Forwarded-Host', 'a.example.com, , b.example.com'],
      ],
      PROXY,
    );
    expect(policy.routingHosts(req).map((h) => h.trim())).toEqual([
      'gw.example.com',
      'a.example.com',
      'b.example.com',
    ]);
  });

  it('is empty without a Host', () => {
    expect(policy.routingHosts(incoming([], CLIENT))).toEqual([]);
  });

  it('refuses two Host lines, whatever their case', () => {
    const req = incoming(
      [
        ['Host', 'a.example.com'],
        ['HOST', 'b.example.com'],
      ],
      CLIENT,
    );
    const err = refusal(() => policy.routingHosts(req));
    expect(err?.code).toBe('invalid_request');
  });
});

describe('the session cookie (issue 44)', () => {
  const policy = createHeaderPolicy(NAMES, trusted, undefined, undefined, '__Host-tg_session');
  const SESSION: Principal = {
    ...ALICE,
    kind: 'session',
    sessionId: 'ses_1',
  } as Principal;

  /** `Cookie` as Node gives it: several lines joined with "; " (RFC 6265 §5.4). */
  const withCookie = (cookie: string) => {
    const req = incoming([['Accept', 'text/html']]);
    req.headers.cookie = cookie;
    return req;
  };

  it('is removed from the forwarded Cookie, every other cookie kept in its order', () => {
    const out = forwarded(policy, withCookie('a=1; __Host-tg_session=ses_1.s3cret; b=2;c=3'), {
      principal: SESSION,
    });
    expect(out.cookie).toBe('a=1; b=2; c=3');
  });

  it('is removed in any letter case (a secret never crosses), on any route, admitted or not', () => {
    for (const spelling of ['__HOST-tg_session', '__host-TG_SESSION', ' __Host-tg_session ']) {
      const out = forwarded(policy, withCookie(`a=1;${spelling}=x.y`));
      expect(out.cookie, spelling).toBe('a=1');
    }
  });

  it('drops a Cookie header left empty', () => {
    const out = forwarded(policy, withCookie('__Host-tg_session=ses_1.s3cret'), {
      principal: SESSION,
    });
    expect(out).not.toHaveProperty('cookie');
    expect(JSON.stringify(out)).not.toContain('s3cret');
  });

  it('leaves a Cookie without it as sent, and another policy (sessions off) strips nothing', () => {
    expect(forwarded(policy, withCookie('a=1;b=2')).cookie).toBe('a=1;b=2');
    const off = createHeaderPolicy(NAMES, trusted);
    expect(forwarded(off, withCookie('__Host-tg_session=x')).cookie).toBe('__Host-tg_session=x');
  });

  it("injects a session's identity as a user's: X-User-*, no X-Client-Id", () => {
    const out = forwarded(policy, withCookie('__Host-tg_session=x'), { principal: SESSION });
    expect(out).toMatchObject({
      'x-tenant-id': 'acme',
      'x-user-id': 'u-alice',
      'x-user-email': 'alice@example.com',
      'x-scope': 'catalog:read catalog:write',
    });
    expect(out).not.toHaveProperty('x-client-id');
    expect(policy.identityHeaders(SESSION)).toMatchObject({
      'X-User-Id': 'u-alice',
      'X-Client-Id': '',
    });
  });
});
