/**
 * The admission decision promises one verdict for proxied traffic,
 * forward-auth and upgrades: the bearer is authenticated (synchronously when
 * `authenticate` answers synchronously, else through a promise that rejects
 * rather than throws), then every tenant check must pass — the route's tenant
 * types and tenant rules, for the route the request is forwarded under and
 * for the route a permissive upstream would read it under (`tenantChecks`).
 * `anonymousAllowed` lets a request without a bearer token through only when
 * every reading of it falls under a public route.
 *
 * `authenticate` is the collaborator here, so it is a stub.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/credentials/authenticate.js';
import type { AuthenticateRequest } from '../../src/auth/credentials/request-credentials.js';
import type { RouteConfig } from '../../src/config/index.js';
import { GatewayError } from '../../src/errors.js';
import {
  anonymousAllowed,
  createAdmit as createAdmitWriting,
  takesSessions,
  tenantChecks,
  type TenantCheck,
  type Who,
} from '../../src/proxy/decide/admit.js';
import { compileRoutes, type CompiledRoute } from '../../src/proxy/decide/routes.js';
import type { RouteTable } from '../../src/proxy/decide/route-table.js';
import { requestView } from '../../src/proxy/decide/tenant-match.js';
import type { TenantType } from '../../src/store/types.js';

function principal(userId: string, tenantId: string, tenantType: TenantType): Principal {
  return {
    kind: 'user',
    userId,
    email: `${userId}@example.com`,
    tenantId,
    tenantType,
    scopes: [],
    claims: {
      iss: 'gw',
      aud: 'api',
      sub: userId,
      tenant_id: tenantId,
      tenant_type: tenantType,
      email: `${userId}@example.com`,
      sv: 1,
      mg: 1,
      jti: `jti-${userId}`,
      iat: 0,
      exp: 60,
    },
  };
}

const ALICE = principal('alice', 'acme', 'orgtenant');
const BOB = principal('bob', 'u-bob', 'usertenant');
const TOKEN = 'Bearer t0ken';

const base = {
  upstream: 'http://127.0.0.1:1',
  timeoutMs: 1000,
  stripAuthorization: false,
  auth: 'bearer',
};
const routes = compileRoutes([
  { ...base, prefix: '/orders', tenant: { path: '/orders/tenants/:tenant_id' } },
  { ...base, prefix: '/billing', tenant: { header: 'X-Tenant' }, tenantTypes: ['orgtenant'] },
  { ...base, prefix: '/me', tenantTypes: ['usertenant'] },
  { ...base, prefix: '/public', auth: 'none' },
  { ...base, prefix: '/' },
] as RouteConfig[]);

function route(table: RouteTable<CompiledRoute>, prefix: string): CompiledRoute {
  const found = table.all.find((r) => r.prefix === prefix);
  if (found === undefined) throw new Error(`no route ${prefix}`);
  return found;
}

/** The checks of a request for `target` (path and query), as the dispatcher builds them. */
function checksFor(
  target: string,
  rawHeaders: string[] = [],
  table: RouteTable<CompiledRoute> = routes,
): TenantCheck[] {
  const [path, query = ''] = target.split('?') as [string, string?];
  return tenantChecks(table, requestView(rawHeaders, path, query), table.match(path));
}

/** An `authenticate` that answers `answer` and records what it was asked. */
function stubAuthenticate(
  answer: (authorization: string | undefined) => Principal | Promise<Principal>,
) {
  const asked: (string | undefined)[] = [];
  const authenticate: AuthenticateRequest = (authorization) => {
    asked.push(authorization);
    return answer(authorization);
  };
  return { authenticate, asked };
}

/** The refusal's code, or `admitted`, of a synchronous admission. */
function verdict(run: () => unknown): string {
  try {
    const result = run();
    if (result instanceof Promise) throw new Error('answered with a promise');
    return 'admitted';
  } catch (err) {
    if (err instanceof GatewayError) return err.code;
    throw err;
  }
}

/** The refusal's code, or `admitted`, of an admission answered with a promise. */
async function settled(result: Principal | Promise<Principal>): Promise<string> {
  expect(result).toBeInstanceOf(Promise);
  try {
    await result;
    return 'admitted';
  } catch (err) {
    if (err instanceof GatewayError) return err.code;
    throw err;
  }
}

/** The admission, writing who it admits to a scope of its own (tested on its own below). */
const createAdmit =
  (authenticate: AuthenticateRequest) =>
  (authorization: string | undefined, checks: readonly TenantCheck[]) =>
    createAdmitWriting(authenticate, undefined)(
      authorization === undefined ? {} : { authorization },
      checks,
      {},
    );

const syncAdmit = (who: Principal) => createAdmit(stubAuthenticate(() => who).authenticate);
const asyncAdmit = (who: Principal) =>
  createAdmit(stubAuthenticate(() => Promise.resolve(who)).authenticate);

describe('createAdmit: authentication', () => {
  it('answers synchronously with the principal when authenticate does', () => {
    const { authenticate, asked } = stubAuthenticate(() => ALICE);
    const result = createAdmit(authenticate)(TOKEN, checksFor('/orders/tenants/acme/1'));
    expect(result).toBe(ALICE);
    expect(asked).toEqual([TOKEN]);
  });

  it('answers with a promise of the principal when authenticate does', async () => {
    const { authenticate, asked } = stubAuthenticate(() => Promise.resolve(ALICE));
    const result = createAdmit(authenticate)(TOKEN, checksFor('/orders/tenants/acme/1'));
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(ALICE);
    expect(asked).toEqual([TOKEN]);
  });

  it('passes a missing Authorization to authenticate as undefined', () => {
    const { authenticate, asked } = stubAuthenticate(() => ALICE);
    createAdmit(authenticate)(undefined, []);
    expect(asked).toEqual([undefined]);
  });

  it('throws what authenticate throws', () => {
    const refused = new GatewayError('invalid_token', 'bad token');
    const admit = createAdmit(
      stubAuthenticate(() => {
        throw refused;
      }).authenticate,
    );
    expect(() => admit(TOKEN, checksFor('/orders/1'))).toThrow(refused);
  });

  it('rejects with what authenticate rejects with', async () => {
    const refused = new GatewayError('invalid_token', 'bad token');
    const admit = createAdmit(stubAuthenticate(() => Promise.reject(refused)).authenticate);
    await expect(admit(TOKEN, checksFor('/orders/1'))).rejects.toBe(refused);
  });

  it('admits on the token alone when no check names a route', () => {
    const view = requestView([], '/nowhere', '');
    expect(syncAdmit(BOB)(TOKEN, [{ view, route: undefined }])).toBe(BOB);
    expect(syncAdmit(BOB)(TOKEN, [])).toBe(BOB);
  });
});

describe('createAdmit: who a refusal names', () => {
  it('writes the principal and its kind before the tenant checks, so a refusal after names them', async () => {
    for (const authenticate of [() => ALICE, () => Promise.resolve(ALICE)]) {
      const who: Who = {};
      const admit = createAdmitWriting(stubAuthenticate(authenticate).authenticate, undefined);
      let refusal: unknown;
      try {
        await admit({ authorization: TOKEN }, checksFor('/orders/tenants/globex/1'), who);
      } catch (err) {
        refusal = err;
      }
      expect(refusal).toMatchObject({ code: 'tenant_mismatch', detail: 'globex' });
      expect(who).toEqual({ userId: 'alice', tenantId: 'acme', kind: 'user' });
    }
    const who: Who = {};
    expect(() =>
      createAdmitWriting(stubAuthenticate(() => BOB).authenticate, undefined)(
        { authorization: TOKEN },
        checksFor('/billing/invoices'),
        who,
      ),
    ).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(who).toEqual({ userId: 'bob', tenantId: 'u-bob', kind: 'user' });
  });

  it('names nobody when the token was refused', () => {
    const who: Who = {};
    const admit = createAdmitWriting(
      stubAuthenticate(() => {
        throw new GatewayError('invalid_token', 'bad token');
      }).authenticate,
      undefined,
    );
    expect(() => admit({ authorization: TOKEN }, checksFor('/orders/1'), who)).toThrow();
    expect(who).toEqual({});
  });
});

describe('createAdmit: tenant types', () => {
  it('refuses a tenant type the route does not admit, naming the ones it does', () => {
    let refusal: unknown;
    try {
      syncAdmit(BOB)(TOKEN, checksFor('/billing/invoices', ['X-Tenant', 'u-bob']));
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    expect((refusal as GatewayError).code).toBe('forbidden');
    expect((refusal as GatewayError).status).toBe(403);
    expect((refusal as GatewayError).message).toContain('orgtenant');
  });

  it.each([
    ['/billing/invoices', ALICE, 'admitted'],
    ['/billing/invoices', BOB, 'forbidden'],
    ['/me/profile', BOB, 'admitted'],
    ['/me/profile', ALICE, 'forbidden'],
    ['/orders/1', ALICE, 'admitted'],
    ['/orders/1', BOB, 'admitted'],
  ] as const)('%s for a %s token: %s', (path, who, expected) => {
    expect(verdict(() => syncAdmit(who)(TOKEN, checksFor(path)))).toBe(expected);
  });

  it('rejects rather than throws when authentication took a promise', async () => {
    const admit = asyncAdmit(BOB);
    let result: Principal | Promise<Principal> | undefined;
    expect(() => (result = admit(TOKEN, checksFor('/billing/invoices')))).not.toThrow();
    expect(await settled(result as Principal | Promise<Principal>)).toBe('forbidden');
  });
});

describe('createAdmit: tenant rules', () => {
  it.each([
    ['/orders/tenants/acme/1', 'admitted'],
    ['/orders/tenants/globex/1', 'tenant_mismatch'],
    ['/orders/tenants/ACME/1', 'tenant_mismatch'],
    ['/orders/list', 'admitted'],
  ])('path rule: %s → %s', async (path, expected) => {
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, checksFor(path)))).toBe(expected);
    expect(await settled(asyncAdmit(ALICE)(TOKEN, checksFor(path)))).toBe(expected);
  });

  it.each([
    [['X-Tenant', 'acme'], 'admitted'],
    [['X-Tenant', 'globex'], 'tenant_mismatch'],
    [['x_tenant', 'globex'], 'tenant_mismatch'],
    [['X-Tenant', 'acme', 'X_Tenant', 'acme'], 'tenant_mismatch'],
    [[], 'admitted'],
  ])('header rule: %j → %s', (raw, expected) => {
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, checksFor('/billing/1', raw)))).toBe(expected);
  });

  it('needs every check to pass, wherever the failing one stands', () => {
    const orders = route(routes, '/orders');
    const ok: TenantCheck = { view: requestView([], '/orders/tenants/acme', ''), route: orders };
    const bad: TenantCheck = { view: requestView([], '/orders/tenants/globex', ''), route: orders };
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, [ok, bad]))).toBe('tenant_mismatch');
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, [bad, ok]))).toBe('tenant_mismatch');
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, [ok, ok]))).toBe('admitted');
  });

  it("applies a later check's tenant types too", () => {
    const view = requestView(['X-Tenant', 'u-bob'], '/x', '');
    const checks: TenantCheck[] = [
      { view, route: route(routes, '/') },
      { view, route: route(routes, '/billing') },
    ];
    expect(verdict(() => syncAdmit(BOB)(TOKEN, checks))).toBe('forbidden');
  });

  it.each([
    ['/ORDERS/tenants/globex/1', 'tenant_mismatch'],
    ['/Orders/tenants/acme/1', 'admitted'],
    ['/orders;x=1/tenants/globex/1', 'tenant_mismatch'],
  ])("%s, forwarded under the catch-all, must pass /orders's rules: %s", (path, expected) => {
    expect(routes.match(path)?.prefix).toBe('/');
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, checksFor(path)))).toBe(expected);
  });
});

describe('tenantChecks', () => {
  it('is the route the request is forwarded under alone for a plain path', () => {
    const view = requestView([], '/orders/tenants/acme', '');
    const orders = route(routes, '/orders');
    expect(tenantChecks(routes, view, orders)).toEqual([{ view, route: orders }]);
  });

  it('adds the route a permissive upstream would read the path under', () => {
    const view = requestView([], '/ORDERS/tenants/acme', '');
    const checks = tenantChecks(routes, view, routes.match(view.path));
    expect(checks.map((c) => c.route?.prefix)).toEqual(['/', '/orders']);
    for (const check of checks) expect(check.view).toBe(view);
  });

  it('adds it to a request under no route at all', () => {
    const narrow = compileRoutes([
      { ...base, prefix: '/orders', tenant: { path: '/orders/tenants/:tenant_id' } },
    ] as RouteConfig[]);
    const view = requestView([], '/Orders/tenants/globex', '');
    const checks = tenantChecks(narrow, view, narrow.match(view.path));
    expect(checks.map((c) => c.route?.prefix)).toEqual([undefined, '/orders']);
    expect(verdict(() => syncAdmit(ALICE)(TOKEN, checks))).toBe('tenant_mismatch');
  });

  it('does not repeat the route already checked', () => {
    const view = requestView([], '/orders/tenants/ACME', '');
    const checks = tenantChecks(routes, view, routes.match(view.path));
    expect(checks.map((c) => c.route?.prefix)).toEqual(['/orders']);
  });

  it('adds the lenient route of each host the request is addressed to, each once', () => {
    const byHost = compileRoutes([
      { ...base, prefix: '/orders', hosts: ['a.example.com'], tenant: { header: 'X-Tenant' } },
      { ...base, prefix: '/orders', hosts: ['b.example.com'], tenantTypes: ['usertenant'] },
      { ...base, prefix: '/' },
    ] as RouteConfig[]);
    const view = requestView([], '/ORDERS/1', '');
    const root = route(byHost, '/');
    const [onA, onB] = byHost.all.filter((r) => r.prefix === '/orders');
    const hosts = ['a.example.com', 'b.example.com', 'a.example.com'];
    expect(tenantChecks(byHost, view, root, hosts).map((c) => c.route)).toEqual([root, onA, onB]);
    // No host: only the routes that name none take part.
    expect(tenantChecks(byHost, view, root).map((c) => c.route)).toEqual([root]);
  });
});

describe('anonymousAllowed', () => {
  it('lets a request without a token through when every reading is under a public route', () => {
    expect(anonymousAllowed(undefined, checksFor('/public/docs'))).toBe(true);
    expect(anonymousAllowed(undefined, checksFor('/public'))).toBe(true);
  });

  it('needs the token under a protected route or under no route', () => {
    expect(anonymousAllowed(undefined, checksFor('/orders/1'))).toBe(false);
    const view = requestView([], '/nowhere', '');
    expect(anonymousAllowed(undefined, [{ view, route: undefined }])).toBe(false);
  });

  it('needs the token when there is nothing to check', () => {
    expect(anonymousAllowed(undefined, [])).toBe(false);
  });

  it('needs the token when a permissive reading falls under a protected route', () => {
    const open = compileRoutes([
      { ...base, prefix: '/', auth: 'none' },
      { ...base, prefix: '/orders' },
    ] as RouteConfig[]);
    expect(anonymousAllowed(undefined, checksFor('/Orders/1', [], open))).toBe(false);
    expect(anonymousAllowed(undefined, checksFor('/other/1', [], open))).toBe(true);
  });

  it.each([
    'Bearer abc',
    'bearer abc',
    'BEARER abc',
    '  Bearer abc',
    'Bearer\tabc',
    'Bearer',
    'Bearer\u00a0abc',
  ])('a bearer token (%j) is never anonymous, even on a public route', (authorization) => {
    expect(anonymousAllowed(authorization, checksFor('/public/docs'))).toBe(false);
  });

  it('an API key is never anonymous either, beside another scheme or alone', () => {
    const admit = createAdmitWriting(stubAuthenticate(() => ALICE).authenticate, 'X-API-Key');
    const checks = checksFor('/public/docs');
    expect(admit.anonymous({ 'x-api-key': 'tgk_x' }, checks)).toBe(false);
    expect(
      admit.anonymous({ 'x-api-key': 'tgk_x', authorization: 'Basic dXNlcjpwYXNz' }, checks),
    ).toBe(false);
    expect(admit.anonymous({ authorization: 'Basic dXNlcjpwYXNz' }, checks)).toBe(true);
    // Keys off: the header is not read, so it is nobody's credential.
    const keysOff = createAdmitWriting(stubAuthenticate(() => ALICE).authenticate, undefined);
    expect(keysOff.anonymous({ 'x-api-key': 'tgk_x' }, checks)).toBe(true);
  });

  it.each(['Basic dXNlcjpwYXNz', 'Digest username="u"', 'Bearerish abc', ''])(
    'another scheme (%j) passes through on a public route',
    (authorization) => {
      expect(anonymousAllowed(authorization, checksFor('/public/docs'))).toBe(true);
    },
  );
});

describe('session routes (issue 44): where a session cookie may admit', () => {
  const table = compileRoutes([
    { ...base, prefix: '/app', auth: 'session', tenant: { header: 'X-Tenant' } },
    { ...base, prefix: '/app/public', auth: 'none' },
    { ...base, prefix: '/api' },
    { ...base, prefix: '/open', auth: 'none' },
  ] as RouteConfig[]);
  const SESSION = { ...ALICE, kind: 'session', sessionId: 'ses_1' } as Principal;
  /** An admission whose session authenticator admits SESSION and whose bearer one refuses. */
  const admitOf = () => {
    const cookies: unknown[] = [];
    const admit = createAdmitWriting(
      () => {
        throw new GatewayError('invalid_token', 'no bearer');
      },
      undefined,
      (_authorization, _key, cookie) => {
        cookies.push(cookie);
        return SESSION;
      },
    );
    return { admit, cookies };
  };

  it('only where every reading falls under a session route, or a public one', () => {
    expect(takesSessions(checksFor('/app/x', [], table))).toBe(true);
    expect(takesSessions(checksFor('/app/public/x', [], table))).toBe(false);
    expect(takesSessions(checksFor('/api/x', [], table))).toBe(false);
    expect(takesSessions(checksFor('/open/x', [], table))).toBe(false);
    // A permissive upstream reads /APP as /app: still the session route's.
    expect(takesSessions(checksFor('/APP/x', [], table))).toBe(false);
    const mixed = [...checksFor('/app/x', [], table), ...checksFor('/api/x', [], table)];
    expect(takesSessions(mixed)).toBe(false);
    const withPublic = [...checksFor('/app/x', [], table), ...checksFor('/open/x', [], table)];
    expect(takesSessions(withPublic)).toBe(true);
  });

  it('reads the cookie on a session route, then applies its tenant rules to the session', () => {
    const { admit, cookies } = admitOf();
    const who: Who = {};
    const headers = { cookie: '__Host-tg_session=v' };
    expect(admit(headers, checksFor('/app/x', [], table), who)).toBe(SESSION);
    expect(who).toEqual({ userId: 'alice', tenantId: 'acme', kind: 'session' });
    expect(cookies).toEqual(['__Host-tg_session=v']);
    expect(
      verdict(() => admit(headers, checksFor('/app/x', ['X-Tenant', 'globex'], table), {})),
    ).toBe('tenant_mismatch');
  });

  it('never reads it on a bearer route', () => {
    const { admit, cookies } = admitOf();
    const headers = { cookie: '__Host-tg_session=v' };
    expect(verdict(() => admit(headers, checksFor('/api/x', [], table), {}))).toBe('invalid_token');
    expect(cookies).toEqual([]);
  });

  it('a request with only a cookie is not anonymous on a session route, and is on a public one', () => {
    const { admit } = admitOf();
    const headers = { cookie: '__Host-tg_session=v' };
    expect(admit.anonymous(headers, checksFor('/app/x', [], table))).toBe(false);
    expect(admit.anonymous(headers, checksFor('/open/x', [], table))).toBe(true);
    expect(admit.presents(headers)).toBe(false);
    expect(admit.presents({ ...headers, authorization: 'bearer x' })).toBe(true);
  });
});
