/**
 * Issue 12, class 2: a tenant in another spelling must not pass as "no
 * tenant" (DESIGN §2: tenant matching reads the request the way a permissive
 * upstream would). One row per spelling, sent as raw bytes to a real gateway
 * on the in-memory store in front of a recording upstream: what the client
 * gets, and whether the upstream saw the request.
 *
 * Alice's token is for acme; globex is the other tenant.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startUpstream, type CountingUpstream } from '../support/upstream.js';

const TENANT = {
  header: 'X-Tenant-Id',
  path: '/orders/tenants/:tenant_id',
  query: 'tenant_id',
  host: ':tenant_id.api.example.com',
};

let upstream: CountingUpstream;
let fx: IdentityFixture;
/** Only `/orders`: an original path no route matches is checked for the token alone. */
let narrow: TestGateway;
let token: string;
let narrowToken: string;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    req.on('end', () => res.end('{"ok":true}'));
  });
  fx = await startMemoryIdentityFixture({
    // The test client is the trusted proxy: its X-Forwarded-Host reaches the upstream.
    trustedProxies: ['127.0.0.1/32'],
    routes: [
      { prefix: '/orders', upstream: upstream.url, tenant: TENANT },
      // A catch-all to the same service, as in a sidecar: `/ORDERS/...` lands
      // here, and a case-insensitive upstream serves it as `/orders/...`.
      { prefix: '/', upstream: upstream.url },
    ],
  });
  narrow = await startTestGateway({
    ...fx.config,
    routes: [{ prefix: '/orders', upstream: upstream.url, tenant: TENANT }],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
  narrowToken = (await tokenFor(narrow.url, ALICE, 'acme')).access_token;
});
afterAll(async () => {
  await narrow?.close();
  await fx?.close();
  await upstream?.close();
});

interface Row {
  /** What the row sends, as written. */
  spelling: string;
  /** Request target. */
  target: string;
  /** Header lines besides Authorization (Host defaults to `api.example.com`). */
  headers?: [string, string][];
  /** Which gateway: the one with the catch-all (default) or the narrow one. */
  gateway?: 'main' | 'narrow';
  /** 200 forwarded (or admitted, for forward-auth), or the refusal. */
  expect: 200 | 404 | [400, 'invalid_request'] | [403, 'tenant_mismatch'];
}

const MISMATCH = [403, 'tenant_mismatch'] as const satisfies Row['expect'];
const INVALID = [400, 'invalid_request'] as const satisfies Row['expect'];

const PATH_ROWS: Row[] = [
  { spelling: 'plain, own tenant', target: '/orders/tenants/acme/items', expect: 200 },
  { spelling: 'plain, other tenant', target: '/orders/tenants/globex/items', expect: MISMATCH },
  { spelling: 'literal in upper case', target: '/orders/TENANTS/globex', expect: MISMATCH },
  { spelling: 'literal in upper case, own tenant', target: '/orders/TENANTS/acme', expect: 200 },
  { spelling: 'literal in mixed case', target: '/orders/Tenants/globex/items', expect: MISMATCH },
  { spelling: 'literal with ;params', target: '/orders/tenants;x=1/globex', expect: MISMATCH },
  { spelling: 'literal with empty ;', target: '/orders/tenants;/globex', expect: MISMATCH },
  { spelling: 'literal with %3B params', target: '/orders/tenants%3Bx=1/globex', expect: MISMATCH },
  { spelling: 'literal with %3b params', target: '/orders/tenants%3bx/globex', expect: MISMATCH },
  { spelling: 'literal with %20', target: '/orders/tenants%20/globex', expect: MISMATCH },
  { spelling: 'literal with leading %20', target: '/orders/%20tenants/globex', expect: MISMATCH },
  { spelling: 'literal with trailing +', target: '/orders/tenants+/globex', expect: MISMATCH },
  { spelling: 'literal with trailing dot', target: '/orders/tenants./globex', expect: MISMATCH },
  { spelling: 'literal, encoded letters', target: '/orders/%54ENANTS/globex', expect: MISMATCH },
  {
    spelling: 'a ;param-only segment between',
    target: '/orders/;x/tenants/globex',
    // Readers disagree on which segment is the tenant: ambiguous, refused before matching.
    expect: INVALID,
  },
  { spelling: 'tenant with ;params', target: '/orders/tenants/globex;x=1', expect: MISMATCH },
  { spelling: 'tenant with %3B params', target: '/orders/tenants/globex%3Bx', expect: MISMATCH },
  { spelling: 'tenant with %20', target: '/orders/tenants/globex%20', expect: MISMATCH },
  // A tab is forwarded like a space (docs/security.md): trimmed by permissive readers, kept by strict ones.
  { spelling: 'tenant with %09', target: '/orders/tenants/globex%09', expect: MISMATCH },
  {
    spelling: 'own tenant with %09 (two readings)',
    target: '/orders/tenants/acme%09',
    expect: MISMATCH,
  },
  { spelling: 'literal with %09', target: '/orders/tenants%09/globex', expect: MISMATCH },
  { spelling: 'own tenant after %09 between', target: '/orders/%09/tenants/acme', expect: INVALID },
  {
    spelling: 'own tenant, %09 in a later segment',
    target: '/orders/tenants/acme/a%09b',
    expect: 200,
  },
  { spelling: '.. with %09', target: '/orders/tenants/acme/..%09/globex', expect: INVALID },
  { spelling: 'tenant with %0A', target: '/orders/tenants/acme%0A', expect: INVALID },
  {
    spelling: 'tenant with trailing dot',
    target: '/orders/tenants/globex./items',
    expect: MISMATCH,
  },
  {
    spelling: 'own tenant with ;params (two readings)',
    target: '/orders/tenants/acme;v=1',
    expect: MISMATCH,
  },
  { spelling: 'own tenant in upper case', target: '/orders/tenants/ACME', expect: MISMATCH },
  { spelling: '..; dot segment', target: '/orders/tenants/acme/..;/globex', expect: INVALID },
  { spelling: '.. with ;params', target: '/orders/tenants/acme/..;x=1/globex', expect: INVALID },
  { spelling: 'encoded ..;', target: '/orders/tenants/acme/%2e%2e%3b/globex', expect: INVALID },
  { spelling: '.. with %20', target: '/orders/tenants/acme/..%20/globex', expect: INVALID },
  {
    spelling: '... is a name, not a dot segment (IIS trims it away)',
    target: '/orders/tenants/acme/.../items',
    expect: 200,
  },
  {
    spelling: '... dropped by a trimming upstream',
    target: '/orders/.../tenants/globex',
    // Readers disagree on which segment is the tenant: ambiguous, refused before matching.
    expect: INVALID,
  },
  { spelling: '.; segment', target: '/orders/.;/tenants/globex', expect: INVALID },
];

const ROUTE_ROWS: Row[] = [
  {
    spelling: 'prefix in upper case (catch-all route)',
    target: '/ORDERS/tenants/globex',
    expect: MISMATCH,
  },
  {
    spelling: 'prefix in mixed case (catch-all route)',
    target: '/Orders/tenants/globex',
    expect: MISMATCH,
  },
  { spelling: 'prefix in upper case, own tenant', target: '/ORDERS/tenants/acme', expect: 200 },
  {
    spelling: 'prefix with ;params (catch-all route)',
    target: '/orders;x=1/tenants/globex',
    expect: MISMATCH,
  },
  {
    spelling: 'prefix with %3B (catch-all route)',
    target: '/orders%3B/tenants/globex',
    expect: MISMATCH,
  },
  {
    spelling: 'prefix with trailing dot (catch-all route)',
    target: '/orders./tenants/globex',
    expect: MISMATCH,
  },
  {
    spelling: 'query rule under an upper-case prefix',
    target: '/ORDERS/1?tenant_id=globex',
    expect: MISMATCH,
  },
  {
    spelling: 'prefix in upper case, no catch-all',
    target: '/ORDERS/tenants/acme',
    gateway: 'narrow',
    expect: 404,
  },
  { spelling: 'a route that is not /orders', target: '/reports/tenants/globex', expect: 200 },
];

const api = (host: string): [string, string][] => [['Host', host]];
const HOST_ROWS: Row[] = [
  {
    spelling: 'own tenant',
    target: '/orders/1',
    headers: api('acme.api.example.com'),
    expect: 200,
  },
  {
    spelling: 'own tenant, upper case, trailing dot',
    target: '/orders/1',
    headers: api('ACME.API.example.com.'),
    expect: 200,
  },
  {
    spelling: 'own tenant, with port',
    target: '/orders/1',
    headers: api('acme.api.example.com:8443'),
    expect: 200,
  },
  {
    spelling: 'own tenant, empty port',
    target: '/orders/1',
    headers: api('acme.api.example.com:'),
    expect: 200,
  },
  {
    spelling: 'other tenant',
    target: '/orders/1',
    headers: api('globex.api.example.com'),
    expect: MISMATCH,
  },
  {
    spelling: 'other tenant, upper case',
    target: '/orders/1',
    headers: api('GLOBEX.api.example.com'),
    expect: MISMATCH,
  },
  {
    spelling: 'other tenant, trailing dot',
    target: '/orders/1',
    headers: api('globex.api.example.com.'),
    expect: MISMATCH,
  },
  {
    spelling: 'other tenant, trailing dot and port',
    target: '/orders/1',
    headers: api('globex.api.example.com.:80'),
    expect: MISMATCH,
  },
  {
    spelling: 'other tenant under a further label',
    target: '/orders/1',
    headers: api('x.globex.api.example.com'),
    expect: MISMATCH,
  },
  {
    spelling: 'port that is not a number',
    target: '/orders/1',
    headers: api('globex.api.example.com:abc'),
    expect: INVALID,
  },
  {
    spelling: 'port that is not a number, own tenant',
    target: '/orders/1',
    headers: api('acme.api.example.com:x'),
    expect: INVALID,
  },
  {
    spelling: 'two ports',
    target: '/orders/1',
    headers: api('globex.api.example.com:80:80'),
    expect: INVALID,
  },
  {
    spelling: 'empty label',
    target: '/orders/1',
    headers: api('globex..api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'leading dot',
    target: '/orders/1',
    headers: api('.globex.api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'userinfo',
    target: '/orders/1',
    headers: api('acme@globex.api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'percent-encoded label',
    target: '/orders/1',
    headers: api('%67lobex.api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'two hosts in one line',
    target: '/orders/1',
    headers: api('acme.api.example.com, globex.api.example.com'),
    expect: INVALID,
  },
  {
    // JavaScript's trim() reads this as the own tenant's host; the upstream gets the byte too.
    spelling: 'own host after a no-break space (0xA0)',
    target: '/orders/1',
    headers: api('\u00a0acme.api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'tenant header: own tenant after a no-break space (0xA0)',
    target: '/orders/1',
    headers: [['X-Tenant-Id', '\u00a0acme']],
    expect: MISMATCH,
  },
  {
    spelling: 'tenant header: own tenant after spaces',
    target: '/orders/1',
    headers: [['X-Tenant-Id', ' acme ']],
    expect: 200,
  },
  { spelling: 'IPv6 literal', target: '/orders/1', headers: api('[::1]:8080'), expect: 200 },
  {
    spelling: 'malformed IPv6 literal',
    target: '/orders/1',
    headers: api('[globex.api.example.com]'),
    expect: INVALID,
  },
  {
    spelling: 'two Host lines',
    target: '/orders/1',
    headers: [
      ['Host', 'acme.api.example.com'],
      ['Host', 'globex.api.example.com'],
    ],
    expect: INVALID,
  },
  {
    spelling: 'absolute-form target naming another host',
    target: 'http://globex.api.example.com/orders/1',
    headers: api('acme.api.example.com'),
    expect: INVALID,
  },
  {
    spelling: 'trusted X-Forwarded-Host, other tenant',
    target: '/orders/1',
    headers: [...api('acme.api.example.com'), ['X-Forwarded-Host', 'globex.api.example.com']],
    expect: MISMATCH,
  },
  {
    spelling: 'trusted X-Forwarded-Host, own tenant',
    target: '/orders/1',
    headers: [...api('acme.api.example.com'), ['X-Forwarded-Host', 'acme.api.example.com']],
    expect: 200,
  },
  {
    spelling: 'X-Forwarded-Host comma list, one other tenant',
    target: '/orders/1',
    headers: [['X-Forwarded-Host', 'acme.api.example.com, globex.api.example.com']],
    expect: MISMATCH,
  },
  {
    spelling: 'X-Forwarded-Host twice, one other tenant',
    target: '/orders/1',
    headers: [
      ['X-Forwarded-Host', 'acme.api.example.com'],
      ['X-Forwarded-Host', 'globex.api.example.com:443'],
    ],
    expect: MISMATCH,
  },
  {
    spelling: 'X-Forwarded-Host with a port that is not a number',
    target: '/orders/1',
    headers: [['X-Forwarded-Host', 'globex.api.example.com:abc']],
    expect: INVALID,
  },
  {
    spelling: 'Forwarded host=',
    target: '/orders/1',
    headers: [['Forwarded', 'for=192.0.2.1;host=globex.api.example.com;proto=https']],
    expect: MISMATCH,
  },
  {
    spelling: 'Forwarded host= quoted, second element',
    target: '/orders/1',
    headers: [
      ['Forwarded', 'host=acme.api.example.com, for=192.0.2.1;Host="globex.api.example.com:443"'],
    ],
    expect: MISMATCH,
  },
];

const QUERY_ROWS: Row[] = [
  { spelling: 'own tenant', target: '/orders/1?tenant_id=acme', expect: 200 },
  { spelling: 'own tenant, name in other case', target: '/orders/1?Tenant_ID=acme', expect: 200 },
  { spelling: 'name in upper case', target: '/orders/1?TENANT_ID=globex', expect: MISMATCH },
  { spelling: 'name in mixed case', target: '/orders/1?Tenant_Id=globex', expect: MISMATCH },
  { spelling: 'array name []', target: '/orders/1?tenant_id[]=globex', expect: MISMATCH },
  {
    spelling: 'array name [] encoded',
    target: '/orders/1?tenant_id%5B%5D=globex',
    expect: MISMATCH,
  },
  { spelling: 'array name [0]', target: '/orders/1?tenant_id[0]=globex', expect: MISMATCH },
  { spelling: 'object name [x]', target: '/orders/1?tenant_id[x]=globex', expect: MISMATCH },
  {
    spelling: 'dotted name (qs allowDots)',
    target: '/orders/1?tenant_id.x=globex',
    expect: MISMATCH,
  },
  {
    spelling: 'PHP-mangled name tenant.id',
    target: '/orders/1?tenant.id=globex',
    expect: MISMATCH,
  },
  {
    spelling: 'PHP-mangled name tenant+id',
    target: '/orders/1?tenant+id=globex',
    expect: MISMATCH,
  },
  {
    spelling: 'PHP-mangled name tenant[id',
    target: '/orders/1?tenant[id=globex',
    expect: MISMATCH,
  },
  { spelling: 'encoded name %5F', target: '/orders/1?tenant%5Fid=globex', expect: MISMATCH },
  { spelling: 'encoded name %74', target: '/orders/1?%74enant_id=globex', expect: MISMATCH },
  { spelling: 'leading space in name', target: '/orders/1?%20tenant_id=globex', expect: MISMATCH },
  { spelling: 'trailing space in name', target: '/orders/1?tenant_id+=globex', expect: MISMATCH },
  { spelling: '; as separator', target: '/orders/1?a=1;tenant_id=globex', expect: MISMATCH },
  {
    spelling: '; hides a second value',
    target: '/orders/1?tenant_id=acme;tenant_id=globex',
    expect: MISMATCH,
  },
  {
    spelling: '; inside own value (two readings)',
    target: '/orders/1?tenant_id=acme;x=1',
    expect: MISMATCH,
  },
  {
    spelling: 'repeated in two cases',
    target: '/orders/1?tenant_id=acme&TENANT_ID=acme',
    expect: MISMATCH,
  },
  {
    spelling: 'repeated as array',
    target: '/orders/1?tenant_id=acme&tenant_id[]=globex',
    expect: MISMATCH,
  },
  { spelling: 'value with space', target: '/orders/1?tenant_id=globex+', expect: MISMATCH },
  {
    spelling: 'an unrelated name',
    target: '/orders/1?tenant_idx=globex&xtenant_id=globex',
    expect: 200,
  },
];

/** Forward-auth rows: the original request comes in the ingress's headers. */
const FORWARD_AUTH_ROWS: Row[] = [
  {
    spelling: 'X-Forwarded-Uri with prefix in upper case, no route matches exactly',
    target: '/auth/verify',
    headers: [['X-Forwarded-Uri', '/ORDERS/tenants/globex']],
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'X-Original-URI with prefix ;params, no route matches exactly',
    target: '/auth/verify',
    headers: [['X-Original-URI', '/orders;jsessionid=1/tenants/globex']],
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'X-Original-URI with literal in upper case',
    target: '/auth/verify',
    headers: [['X-Original-URI', '/orders/TENANTS/globex']],
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'Envoy path suffix with array query name',
    target: '/auth/verify/orders/1?tenant_id[]=globex',
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'X-Forwarded-Host comma list',
    target: '/auth/verify',
    headers: [
      ['X-Forwarded-Uri', '/orders/1'],
      ['X-Forwarded-Host', 'acme.api.example.com, globex.api.example.com'],
    ],
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'Forwarded host=',
    target: '/auth/verify',
    headers: [
      ['X-Forwarded-Uri', '/orders/1'],
      ['Forwarded', 'host=globex.api.example.com'],
    ],
    gateway: 'narrow',
    expect: MISMATCH,
  },
  {
    spelling: 'X-Original-URL with userinfo',
    target: '/auth/verify',
    headers: [['X-Original-URL', 'https://acme@globex.api.example.com/orders/1']],
    gateway: 'narrow',
    expect: INVALID,
  },
  {
    spelling: 'own tenant in every reading',
    target: '/auth/verify',
    headers: [
      ['X-Forwarded-Uri', '/ORDERS/Tenants/acme?Tenant_Id=acme'],
      ['X-Forwarded-Host', 'ACME.api.example.com.:443'],
    ],
    gateway: 'narrow',
    expect: 200,
  },
];

describe.each([
  ['path', PATH_ROWS],
  ['route prefix', ROUTE_ROWS],
  ['host', HOST_ROWS],
  ['query', QUERY_ROWS],
])('proxy, %s spellings', (_place, rows) => {
  it.each(rows)('$spelling: $target', (row) => check(row, true));
});

describe('forward-auth spellings', () => {
  it.each(FORWARD_AUTH_ROWS)('$spelling', (row) => check(row, false));
});

async function check(row: Row, proxied: boolean): Promise<void> {
  const before = upstream.requests.length;
  const gateway = row.gateway === 'narrow' ? narrow.url : fx.gw.url;
  // Each gateway has a store of its own: a token of the one the row is sent to.
  const rowToken = row.gateway === 'narrow' ? narrowToken : token;
  const headers = row.headers ?? [];
  const hasHost = headers.some(([name]) => name.toLowerCase() === 'host');
  const res = await sendRaw(gateway, row.target, [
    ...(hasHost ? [] : ([['Host', 'api.example.com']] as [string, string][])),
    ...headers,
    ['Authorization', bearer(rowToken)],
  ]);
  const seen = upstream.requests.slice(before);
  if (row.expect === 200) {
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 200 });
    if (proxied) {
      expect(seen).toHaveLength(1);
      expect(seen[0]?.headers['x-tenant-id']).toBe('acme');
    } else {
      expect(res.headers['x-tenant-id']).toBe('acme');
      expect(seen).toHaveLength(0);
    }
    return;
  }
  const [status, code] = row.expect === 404 ? [404, 'not_found'] : row.expect;
  expect({ status: res.status, error: errorOf(res.body) }).toEqual({ status, error: code });
  expect(seen).toHaveLength(0);
}

function errorOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    return body;
  }
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written byte for byte (no client library normalises the
 * target or drops a repeated Host); the connection is dropped once the
 * response is complete.
 */
function sendRaw(base: string, target: string, headers: [string, string][]): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  const head = [
    `GET ${target} HTTP/1.1`,
    ...headers.map(([n, v]) => `${n}: ${v}`),
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    // latin1: a header byte such as 0xA0 (no-break space) goes on the wire as one byte, as a client sends it.
    const socket = connect(Number(port), hostname, () => socket.write(head, 'latin1'));
    let text = '';
    const tryParse = (ended: boolean): void => {
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        if (ended) reject(new Error(`no response head: ${JSON.stringify(text)}`));
        return;
      }
      const lines = text.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const parsed: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = text.slice(split + 4);
      let body: string | undefined;
      if (parsed['transfer-encoding'] === 'chunked') {
        if (rest.endsWith('0\r\n\r\n')) body = unchunk(rest);
      } else if (parsed['content-length'] !== undefined) {
        if (rest.length >= Number(parsed['content-length'])) body = rest;
      } else if (ended) body = rest;
      if (body === undefined) {
        if (ended) reject(new Error(`response cut: ${JSON.stringify(text)}`));
        return;
      }
      socket.destroy();
      resolve({ status, headers: parsed, body });
    };
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      tryParse(false);
    });
    socket.on('error', reject);
    socket.on('close', () => tryParse(true));
  });
}

function unchunk(raw: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
