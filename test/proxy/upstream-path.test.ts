/**
 * `upstreamPathOf` promises the path the upstream sees for a normalised path
 * under a route: the route's prefix, cut at its segment boundary, replaced by
 * nothing (`stripPrefix`) or by the `rewrite` prefix, and `/` when nothing is
 * left; a route with neither forwards the path as it is. Routes are compiled
 * from config and matched as the gateway matches them, so the path given is
 * always one the route matched.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RouteConfig } from '../../src/config/index.js';
import { normaliseTarget } from '../../src/proxy/decide/normalise-path.js';
import { compileRoutes, upstreamPathOf } from '../../src/proxy/decide/routes.js';

const base = { upstream: 'http://127.0.0.1:1', timeoutMs: 1000, stripAuthorization: false };
const routes = compileRoutes([
  { ...base, prefix: '/catalog', stripPrefix: true },
  { ...base, prefix: '/catalog/admin' },
  { ...base, prefix: '/shop', rewrite: { prefix: '/v2' } },
  { ...base, prefix: '/docs/', stripPrefix: true },
  { ...base, prefix: '/api', rewrite: { prefix: '/v1/' } },
  { ...base, prefix: '/legacy', rewrite: { prefix: '/' } },
  { ...base, prefix: '/Mixed', stripPrefix: true },
  { ...base, prefix: '/' },
] as RouteConfig[]);

/** The route `path` falls under and the path its upstream sees. */
function forwarded(path: string, table = routes): [string | undefined, string | undefined] {
  const route = table.match(path);
  return [route?.prefix, route === undefined ? undefined : upstreamPathOf(route, path)];
}

describe('stripPrefix', () => {
  it.each([
    ['/catalog/items', '/items'],
    ['/catalog/items/', '/items/'],
    ['/catalog/a/b/c', '/a/b/c'],
    ['/catalog', '/'],
    ['/catalog/', '/'],
    ['/catalog/a%20b', '/a%20b'],
    ['/catalog/catalog', '/catalog'],
    ['/Mixed/x', '/x'],
  ])('%s reaches the upstream as %s', (path, expected) => {
    expect(forwarded(path)[1]).toBe(expected);
  });

  it.each([
    ['/docs', '/'],
    ['/docs/', '/'],
    ['/docs/guide', '/guide'],
  ])('a prefix configured with a trailing slash: %s → %s', (path, expected) => {
    expect(forwarded(path)).toEqual(['/docs/', expected]);
  });
});

describe('rewrite', () => {
  it.each([
    ['/shop/items', '/v2/items'],
    ['/shop/items/', '/v2/items/'],
    ['/shop', '/v2'],
    ['/shop/', '/v2/'],
  ])('%s reaches the upstream as %s', (path, expected) => {
    expect(forwarded(path)).toEqual(['/shop', expected]);
  });

  it.each([
    ['/api/x', '/v1/x'],
    ['/api', '/v1'],
    ['/api/', '/v1/'],
  ])('a replacement with a trailing slash adds none: %s → %s', (path, expected) => {
    expect(forwarded(path)).toEqual(['/api', expected]);
  });

  it.each([
    ['/legacy/x', '/x'],
    ['/legacy', '/'],
    ['/legacy/', '/'],
  ])('a replacement of / strips the prefix: %s → %s', (path, expected) => {
    expect(forwarded(path)).toEqual(['/legacy', expected]);
  });
});

describe('segment boundaries', () => {
  it.each([
    ['/catalogue/x', '/'],
    ['/shopping', '/'],
    ['/apix', '/'],
    ['/docsy/a', '/'],
  ])('%s is not under the shorter prefix: the catch-all forwards it as it is', (path, prefix) => {
    expect(forwarded(path)).toEqual([prefix, path]);
  });

  it('a longer prefix without a rewrite forwards its paths as they are', () => {
    expect(forwarded('/catalog/admin/users')).toEqual(['/catalog/admin', '/catalog/admin/users']);
    expect(forwarded('/catalog/adminx')).toEqual(['/catalog', '/adminx']);
  });

  it('leaves the path alone for a route with neither stripPrefix nor rewrite', () => {
    expect(forwarded('/other/x/')).toEqual(['/', '/other/x/']);
    expect(forwarded('/')).toEqual(['/', '/']);
  });

  it('property: a rewritten path stays under the replacement prefix', () => {
    const segment = fc.constantFrom('a', 'B', '..', '.', '%2e%2e', 'shop', 'v2', '', '%20', ';x');
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), fc.boolean(), (segments, slash) => {
        const { path } = normaliseTarget(`/shop/${segments.join('/')}${slash ? '/' : ''}`);
        const [prefix, seen] = forwarded(path);
        if (prefix !== '/shop') return;
        expect(seen === '/v2' || seen?.startsWith('/v2/')).toBe(true);
        expect(seen).toBe(`/v2${path.slice('/shop'.length)}`);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a route at the root', () => {
  it.each([
    ['/', '/'],
    ['/x', '/x'],
    ['/x/', '/x/'],
  ])('with stripPrefix forwards %s as %s', (path, expected) => {
    const root = compileRoutes([{ ...base, prefix: '/', stripPrefix: true }] as RouteConfig[]);
    expect(forwarded(path, root)).toEqual(['/', expected]);
  });

  it.each([
    ['/', '/v2/'],
    ['/x', '/v2/x'],
    ['/x/y/', '/v2/x/y/'],
  ])('with rewrite forwards %s as %s', (path, expected) => {
    const root = compileRoutes([
      { ...base, prefix: '/', rewrite: { prefix: '/v2' } },
    ] as RouteConfig[]);
    expect(forwarded(path, root)).toEqual(['/', expected]);
  });
});
