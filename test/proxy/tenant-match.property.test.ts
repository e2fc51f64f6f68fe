/**
 * Issue 12, class 2, as properties: for arbitrary spellings generated from a
 * tenant id — in the path, the query and the host — the gateway either
 * refuses the request, or every reading a permissive upstream could make of
 * what it forwards names the token's tenant (or none).
 *
 * The readers below are small models of real upstreams, written apart from
 * the code under test: Express (case-insensitive routes, `decodeURIComponent`
 * params), Tomcat/Spring (`;params` dropped, then dot segments resolved),
 * IIS (trailing dots and spaces trimmed), and the query parsers of
 * URLSearchParams, qs, PHP, Python's old `parse_qs` and ASP.NET.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../src/config/index.js';
import { GatewayError } from '../../src/errors.js';
import { normaliseTarget } from '../../src/proxy/decide/normalise-path.js';
import { createRouteTable } from '../../src/proxy/decide/route-table.js';
import { tenantChecks } from '../../src/proxy/decide/admit.js';
import { compileRoutes } from '../../src/proxy/decide/routes.js';
import { compileTenantRules, requestView } from '../../src/proxy/decide/tenant-match.js';

const TOKEN_TENANT = 'acme';
const TENANT = fc.oneof(
  fc.constantFrom('acme', 'globex', 'acme-2', 'ac'),
  fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,8}$/),
);

/** The verdict: `admitted`, or the refusal's CODE. */
function verdict(run: () => void): string {
  try {
    run();
    return 'admitted';
  } catch (err) {
    if (err instanceof GatewayError) return err.code;
    throw err;
  }
}

/** The verdict on `raw` once normalised, and the path the gateway would forward. */
function verdictOnTarget(
  raw: string,
  check: (target: ReturnType<typeof normaliseTarget>) => void,
): { result: string; forwarded: string } {
  let forwarded = '';
  const result = verdict(() => {
    const target = normaliseTarget(raw);
    forwarded = target.path;
    check(target);
  });
  return { result, forwarded };
}

const base = { upstream: 'http://127.0.0.1:1', timeoutMs: 1000, stripAuthorization: false };
/** `/orders` with a tenant in its path, and a catch-all route without tenant rules. */
const ORDER_ROUTES = compileRoutes([
  { ...base, prefix: '/orders', tenant: { path: '/orders/tenants/:tenant_id' } },
  { ...base, prefix: '/' },
] as RouteConfig[]);

/** Every tenant check the order routes make on `target`, against the token's tenant. */
function checkOrderRoutes(target: ReturnType<typeof normaliseTarget>): void {
  const view = requestView([], target.path, target.query);
  for (const { route } of tenantChecks(ORDER_ROUTES, view, ORDER_ROUTES.match(target.path)))
    route?.checkTenant(view, TOKEN_TENANT);
}

// ---------------------------------------------------------------- spellings

/** `text` with each letter in either case. */
const anyCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

/** `text` with some characters percent-encoded, in either hex case. */
const someEncoded = (text: string) =>
  fc
    .array(fc.constantFrom('plain', 'lower', 'upper'), {
      minLength: text.length,
      maxLength: text.length,
    })
    .map((how) =>
      [...text]
        .map((c, i) => {
          const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
          if (how[i] === 'lower') return `%${hex}`;
          if (how[i] === 'upper') return `%${hex.toUpperCase()}`;
          return c;
        })
        .join(''),
    );

/** A suffix a permissive upstream may drop from a segment. */
const SEGMENT_SUFFIX = fc.constantFrom(
  '',
  '',
  '',
  ';',
  ';x=1',
  ';jsessionid=abc',
  '%3B',
  '%3bx',
  '.',
  '..',
  '%20',
  '%20%20',
  '.%20',
  '%09',
  '%20%09',
  '%2e',
  '+',
);

/** One spelling of a path segment: case, escapes, a droppable suffix, maybe a leading space. */
const segmentSpelling = (text: string) =>
  fc
    .tuple(
      fc.oneof(anyCase(text), someEncoded(text), fc.constant(text)),
      SEGMENT_SUFFIX,
      fc.constantFrom('', '', '', '%20', '%09'),
    )
    .map(([body, suffix, lead]) => `${lead}${body}${suffix}`);

/** Segments a path may carry around the interesting ones. */
const NOISE_SEGMENT = fc.constantFrom(
  '',
  '.',
  '..',
  '..;',
  '..;x=1',
  '%2e%2e%3b',
  '..%20',
  '..%09',
  '%09',
  '.;',
  '...',
  ';x',
  '%3B',
  '%20',
  'items',
  'acme',
  'globex',
  'tenants',
  'orders',
);

const pathSpelling = fc
  .tuple(
    segmentSpelling('orders'),
    segmentSpelling('tenants'),
    TENANT.chain((tenant) => segmentSpelling(tenant)),
    fc.array(NOISE_SEGMENT, { maxLength: 3 }),
    fc.array(NOISE_SEGMENT, { maxLength: 3 }),
    fc.array(NOISE_SEGMENT, { maxLength: 2 }),
  )
  .map(
    ([orders, tenants, tenant, before, between, after]) =>
      `/${[...before, orders, ...between, tenants, tenant, ...after].join('/')}`,
  );

// ------------------------------------------------------------ path readers

type PathReader = (forwarded: string) => string | undefined;

/** `/orders/tenants/:tenant_id` (and below) over segments as a reader split them. */
function tenantOf(
  segments: string[],
  same: (segment: string, literal: string) => boolean,
): string | undefined {
  if (segments.length < 3) return undefined;
  return same(segments[0] as string, 'orders') && same(segments[1] as string, 'tenants')
    ? segments[2]
    : undefined;
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const resolveDots = (segments: string[]): string[] => {
  const out: string[] = [];
  for (const s of segments) {
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  return out;
};

const ignoreCase = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const PATH_READERS: Record<string, PathReader> = {
  // Express 4: routes are case-insensitive, params are decodeURIComponent'd.
  express: (p) =>
    tenantOf(
      p
        .split('/')
        .filter((s) => s !== '')
        .map(safeDecode),
      ignoreCase,
    ),
  // Tomcat: `;params` dropped from each raw segment, then decoded, then dot segments.
  tomcat: (p) =>
    tenantOf(
      resolveDots(p.split('/').map((s) => safeDecode(s.split(';')[0] as string))),
      (a, b) => a === b,
    ),
  // Spring with case-insensitive matching: decoded first, then `;...` removed.
  spring: (p) =>
    tenantOf(
      resolveDots(p.split('/').map((s) => safeDecode(s).split(';')[0] as string)),
      ignoreCase,
    ),
  // A matcher that trims each decoded segment (Java's `trim`, JavaScript's `trim`), case-insensitive.
  trimming: (p) =>
    tenantOf(
      resolveDots(
        p
          .split('/')
          .map((s) => safeDecode(s).trim())
          .filter((s) => s !== ''),
      ),
      ignoreCase,
    ),
  // IIS: decoded, trailing dots and spaces trimmed, case-insensitive.
  iis: (p) =>
    tenantOf(
      resolveDots(
        p.split('/').map((s) => {
          const d = safeDecode(s);
          return d === '.' || d === '..' ? d : d.replace(/[. ]+$/, '');
        }),
      ),
      ignoreCase,
    ),
};

describe('path spellings', () => {
  const rule = compileTenantRules({ path: '/orders/tenants/:tenant_id' });

  it('property: refused, or every upstream reading names the token tenant (or none)', () => {
    fc.assert(
      fc.property(pathSpelling, (raw) => {
        const { result, forwarded } = verdictOnTarget(raw, (target) =>
          rule(requestView([], target.path, target.query), TOKEN_TENANT),
        );
        if (result !== 'admitted') {
          expect(['invalid_request', 'tenant_mismatch']).toContain(result);
          return;
        }
        for (const [name, read] of Object.entries(PATH_READERS)) {
          const named = read(forwarded);
          expect({ raw, forwarded, reader: name, named }).toEqual(
            expect.objectContaining({ named: named === undefined ? undefined : TOKEN_TENANT }),
          );
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('property: the plain spelling of the token tenant is admitted, of another refused', () => {
    fc.assert(
      fc.property(TENANT, (tenant) => {
        const path = `/orders/tenants/${tenant}/items`;
        const result = verdict(() => rule(requestView([], path, ''), TOKEN_TENANT));
        expect(result).toBe(tenant === TOKEN_TENANT ? 'admitted' : 'tenant_mismatch');
      }),
    );
  });

  it('property: a route prefix in another spelling still brings its rules', () => {
    fc.assert(
      fc.property(pathSpelling, (raw) => {
        const { result, forwarded } = verdictOnTarget(raw, checkOrderRoutes);
        if (result !== 'admitted') return;
        for (const read of Object.values(PATH_READERS)) {
          const named = read(forwarded);
          if (named !== undefined) expect({ raw, named }).toEqual({ raw, named: TOKEN_TENANT });
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('counterexamples fast-check found', () => {
  // IIS drops `...` and keeps `;x`; Spring drops `;` and keeps `...`: each
  // reads another segment as the tenant.
  it.each(['/.../orders/tenants/a/../;x', '/%3B/orders/tenants/a/../...'])(
    '%s: a segment some upstreams drop before the tenant segment is refused',
    (raw) => {
      const { result } = verdictOnTarget(raw, checkOrderRoutes);
      expect(result).toBe('invalid_request');
    },
  );
});

describe('route table, lenient reading', () => {
  const table = createRouteTable([
    { prefix: '/orders', name: 'orders' },
    { prefix: '/orders/archive', name: 'archive' },
    { prefix: '/', name: 'root' },
  ]);
  it.each([
    ['/orders/1', 'orders', undefined],
    ['/ORDERS/1', 'root', 'orders'],
    ['/Orders', 'root', 'orders'],
    ['/orders;jsessionid=1/1', 'root', 'orders'],
    ['/orders%3B/1', 'root', 'orders'],
    ['/orders./1', 'root', 'orders'],
    ['/orders/ARCHIVE/2020', 'orders', 'archive'],
    ['/orders/;x/archive', 'orders', 'archive'],
    ['/ordersx', 'root', undefined],
  ])('%s: forwarded under %s, also read as under %s', (path, forwarded, lenient) => {
    expect(table.match(path)?.name).toBe(forwarded);
    // Answered only when the lenient reading is not the path itself.
    expect(table.matchLenient(path)?.name).toBe(lenient);
  });
});

// ------------------------------------------------------------------- query

/** A spelling of the parameter name. */
const nameSpelling = fc
  .tuple(
    fc.oneof(anyCase('tenant_id'), someEncoded('tenant_id'), fc.constant('tenant_id')),
    fc.constantFrom('', '', '[]', '[0]', '[x]', '%5B%5D', '.x', '+', '%20'),
    fc.constantFrom('', '', '+', '%20'),
  )
  .chain(([name, suffix, lead]) =>
    fc
      .constantFrom(name, name.replace('_', '.'), name.replace('_', '+'), name.replace('_', '['))
      .map((n) => `${lead}${n}${suffix}`),
  );

const valueSpelling = TENANT.chain((tenant) =>
  fc
    .tuple(
      fc.oneof(fc.constant(tenant), anyCase(tenant), someEncoded(tenant)),
      fc.constantFrom('', '', '', '+', '%20', ',acme', ',globex', ';x=1'),
    )
    .map(([v, suffix]) => `${v}${suffix}`),
);

const querySpelling = fc
  .array(
    fc.oneof(
      fc.tuple(nameSpelling, valueSpelling).map(([n, v]) => `${n}=${v}`),
      fc.constantFrom('a=1', 'tenant_idx=globex', 'xtenant_id=globex', 'tenant=globex'),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .chain((pairs) =>
    fc
      .array(fc.constantFrom('&', ';'), { minLength: pairs.length, maxLength: pairs.length })
      .map((seps) => pairs.map((p, i) => (i === 0 ? p : `${seps[i]}${p}`)).join('')),
  );

/** Every value an upstream's parser may hand the app for `tenant_id`. */
type QueryReader = (query: string) => string[];

const formDecode = (s: string) => safeDecode(s.replace(/\+/g, ' '));
const pairsOf = (query: string, separators: RegExp) =>
  query
    .split(separators)
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0
        ? [formDecode(p), '']
        : [formDecode(p.slice(0, eq)), formDecode(p.slice(eq + 1))];
    }) as [string, string][];
const valuesWhere = (pairs: [string, string][], test: (name: string) => boolean) =>
  pairs.filter(([n]) => test(n)).map(([, v]) => v);

const QUERY_READERS: Record<string, QueryReader> = {
  urlSearchParams: (q) => new URLSearchParams(q).getAll('tenant_id'),
  qs: (q) =>
    valuesWhere(
      pairsOf(q, /&/),
      (n) => n.replace(/\[.*$/, '').replace(/\..*$/, '') === 'tenant_id',
    ),
  php: (q) =>
    valuesWhere(pairsOf(q, /&/), (n) => {
      const mangled = n.trimStart().replace(/\[[^\]]*\].*$/, '');
      return mangled.replace(/[ .[]/g, '_') === 'tenant_id';
    }),
  pythonParseQs: (q) => valuesWhere(pairsOf(q, /[&;]/), (n) => n === 'tenant_id'),
  aspNet: (q) => {
    const values = valuesWhere(pairsOf(q, /&/), (n) => n.trim().toLowerCase() === 'tenant_id');
    return values.length === 0 ? [] : [values.join(',')];
  },
};

describe('query spellings', () => {
  const rule = compileTenantRules({ query: 'tenant_id' });

  it('property: refused, or every parser reads the token tenant (once) or nothing', () => {
    fc.assert(
      fc.property(querySpelling, (query) => {
        const result = verdict(() => rule(requestView([], '/orders/1', query), TOKEN_TENANT));
        if (result !== 'admitted') {
          expect(result).toBe('tenant_mismatch');
          return;
        }
        for (const [name, read] of Object.entries(QUERY_READERS)) {
          const values = read(query);
          expect({ query, reader: name, values }).toEqual({
            query,
            reader: name,
            values: values.length === 0 ? [] : [TOKEN_TENANT],
          });
        }
      }),
      { numRuns: 3000 },
    );
  });
});

// -------------------------------------------------------------------- host

const hostSpelling = TENANT.chain((tenant) =>
  fc
    .tuple(
      fc.constantFrom('', '', '', 'x.', 'acme.', 'globex.', '.', 'acme@', 'u:p@'),
      fc.oneof(fc.constant(tenant), anyCase(tenant), someEncoded(tenant)),
      fc.constantFrom('', '', '.', '..'),
      fc.constantFrom('api.example.com', 'API.Example.COM', 'api..example.com', 'example.com'),
      fc.constantFrom('', '', '.', '..'),
      fc.constantFrom('', '', ':8443', ':', ':abc', ':80:80', ':8o', ': 80', ':+80'),
      fc.constantFrom('', '', ' ', ',acme.api.example.com'),
    )
    .map(
      ([pre, label, dot1, domain, dot2, port, tail]) =>
        `${pre}${label}${dot1 === '' ? '.' : dot1}${domain}${dot2}${port}${tail}`,
    ),
);

/** The tenant a hostname names under `*.api.example.com`, by each kind of reader. */
type HostReader = (host: string) => string | undefined;

const underApi = (hostname: string): string | undefined => {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (!h.endsWith('.api.example.com')) return undefined;
  const labels = h.slice(0, -'.api.example.com'.length).split('.');
  return labels[labels.length - 1];
};

const HOST_READERS: Record<string, HostReader> = {
  // Express `req.hostname`: the port cut at the last colon.
  express: (h) => {
    const v = h.trim();
    const colon = v.lastIndexOf(':');
    return underApi(colon < 0 ? v : v.slice(0, colon));
  },
  // Anything built on the WHATWG URL parser (userinfo dropped, escapes decoded).
  whatwg: (h) => {
    try {
      return underApi(new URL(`http://${h.trim()}/`).hostname);
    } catch {
      return undefined;
    }
  },
  // A reader that takes everything before the first colon.
  firstColon: (h) => underApi(h.trim().split(':')[0] as string),
  // A reader that reads the first label of whatever host it gets.
  firstLabel: (h) => {
    const name = h.trim().split(':')[0] as string;
    return name.toLowerCase().endsWith('.api.example.com') || name.endsWith('.api.example.com.')
      ? name.toLowerCase().split('.')[0]
      : undefined;
  },
};

describe('host spellings', () => {
  const rule = compileTenantRules({ host: ':tenant_id.api.example.com' });

  it('property: refused, or every host reader (Host, X-Forwarded-Host) names the token tenant or none', () => {
    fc.assert(
      fc.property(
        hostSpelling,
        fc.option(hostSpelling, { nil: undefined }),
        fc.constantFrom('x-forwarded-host', 'forwarded'),
        (host, forwardedHost, how) => {
          const raw = ['Host', host];
          if (forwardedHost !== undefined) {
            raw.push(
              how === 'forwarded' ? 'Forwarded' : 'X-Forwarded-Host',
              how === 'forwarded' ? `for=192.0.2.1;host="${forwardedHost}"` : forwardedHost,
            );
          }
          const result = verdict(() => rule(requestView(raw, '/orders/1', ''), TOKEN_TENANT));
          if (result !== 'admitted') {
            expect(['invalid_request', 'tenant_mismatch']).toContain(result);
            return;
          }
          const seen = [host, ...(forwardedHost === undefined ? [] : forwardedHost.split(','))];
          for (const value of seen) {
            for (const [name, read] of Object.entries(HOST_READERS)) {
              const named = read(value);
              if (named !== undefined)
                expect({ value, reader: name, named }).toEqual({
                  value,
                  reader: name,
                  named: TOKEN_TENANT,
                });
            }
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('property: the plain host of the token tenant is admitted, of another refused', () => {
    fc.assert(
      fc.property(TENANT, fc.constantFrom('', ':443', '.', '.:80'), (tenant, tail) => {
        const raw = ['Host', `${tenant.toUpperCase()}.api.example.com${tail}`];
        const result = verdict(() => rule(requestView(raw, '/', ''), TOKEN_TENANT));
        expect(result).toBe(tenant === TOKEN_TENANT ? 'admitted' : 'tenant_mismatch');
      }),
    );
  });
});
