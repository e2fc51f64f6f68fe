/**
 * The route table: routes are chosen by host, then by the longest path
 * prefix, on segment boundaries (`/orders` matches `/orders` and `/orders/1`,
 * never `/ordersx`). A route that names `hosts` serves only those: an exact
 * name (`api.example.com`) or one wildcard label (`*.example.com`, which is
 * `a.example.com` but neither `example.com` nor `a.b.example.com`). The routes
 * of the request's exact host are tried first, then those of its wildcard,
 * then the routes without `hosts` — as an ingress does.
 *
 * A request is forwarded under the route its normalised path matches, as
 * written. But a permissive upstream may read `/ORDERS/1` or
 * `/orders;jsessionid=1/1` as `/orders/1` (Express routes ignore letter case,
 * servlet containers drop `;params`), so `matchLenient` also names the route
 * that reading falls under: its tenant rules must hold too.
 */
import type { RouteConfig } from '../../config/index.js';
import { foldCase, lenientPath } from './normalise-path.js';

/**
 * Something `lenientPath` may change (`LENIENT_WORK` there: `;`, `%`, `+`, a
 * segment ending in a dot) or a letter `foldCase` may change: else the
 * permissive reading is the path itself.
 */
const LENIENT_OR_FOLD = /[;%+A-Z\u0080-\uffff]|\.(?:\/|$)/;
/** A letter that `foldCase` changes could be there. */
const NEEDS_FOLD = /[A-Z\u0080-\uffff]/;

export interface RouteTable<R> {
  /**
   * The route a normalised path is forwarded under, for a request addressed
   * to `host` (a lower-case hostname, see `hostnameOf`; undefined: none).
   */
  match(path: string, host?: string): R | undefined;
  /**
   * The route the path falls under when read permissively (letter case,
   * `;params`, trailing dots and spaces), or `undefined` when that reading
   * is the path itself. Cheap for a plain lower-case path: two regex tests.
   */
  matchLenient(path: string, host?: string): R | undefined;
  /** Some route names `hosts`: the request's host takes part in the match. */
  readonly byHost: boolean;
  /** Every route, as configured. */
  readonly all: readonly R[];
}

type Routable = Pick<RouteConfig, 'prefix' | 'hosts'>;

/** The routes of one host, or of any host: exact prefixes and case-folded ones, longest first. */
interface Tier<R> {
  exact: { route: R; prefix: string }[];
  folded: { route: R; prefix: string }[];
}

export function createRouteTable<R extends Routable>(routes: readonly R[]): RouteTable<R> {
  const anyHost = tierOf(routes.filter((r) => r.hosts === undefined));
  const exactHosts = new Map<string, Tier<R>>();
  const wildcardHosts = new Map<string, Tier<R>>();
  for (const [name, members] of groupByHost(routes)) {
    if (name.startsWith('*.')) wildcardHosts.set(name.slice(2), tierOf(members));
    else exactHosts.set(name, tierOf(members));
  }
  const byHost = exactHosts.size + wildcardHosts.size > 0;
  const anyHostOnly = [anyHost];

  /** The tiers a request for `host` tries, in order. */
  const tiersFor = (host: string | undefined): Tier<R>[] => {
    if (!byHost || host === undefined) return anyHostOnly;
    const tiers: Tier<R>[] = [];
    const exact = exactHosts.get(host);
    if (exact !== undefined) tiers.push(exact);
    const dot = host.indexOf('.');
    const wildcard = dot > 0 ? wildcardHosts.get(host.slice(dot + 1)) : undefined;
    if (wildcard !== undefined) tiers.push(wildcard);
    tiers.push(anyHost);
    return tiers;
  };
  const find = (kind: keyof Tier<R>, path: string, host: string | undefined): R | undefined => {
    for (const tier of tiersFor(host)) {
      for (const { route, prefix } of tier[kind]) {
        if (prefix === '' || path === prefix || path.startsWith(`${prefix}/`)) return route;
      }
    }
    return undefined;
  };
  return {
    all: routes,
    byHost,
    match: (path, host) => find('exact', path, host),
    matchLenient(path, host) {
      // The plain lower-case path of the steady state: one regex test.
      if (!LENIENT_OR_FOLD.test(path)) return undefined;
      const lenient = lenientPath(path);
      if (lenient === undefined && !NEEDS_FOLD.test(path)) return undefined;
      return find('folded', foldCase(lenient ?? path), host);
    },
  };
}

function tierOf<R extends Routable>(routes: readonly R[]): Tier<R> {
  const longestFirst = (a: { prefix: string }, b: { prefix: string }) =>
    b.prefix.length - a.prefix.length;
  return {
    exact: routes.map((route) => ({ route, prefix: trimSlash(route.prefix) })).sort(longestFirst),
    folded: routes
      .map((route) => ({
        route,
        prefix: trimSlash(foldCase(lenientPath(route.prefix) ?? route.prefix)),
      }))
      .sort(longestFirst),
  };
}

/** Each host name (as configured: lower case, no trailing dot) with the routes naming it. */
function groupByHost<R extends Routable>(routes: readonly R[]): Map<string, R[]> {
  const groups = new Map<string, R[]>();
  for (const route of routes) {
    for (const host of route.hosts ?? []) {
      const members = groups.get(host) ?? [];
      if (!members.includes(route)) members.push(route);
      groups.set(host, members);
    }
  }
  return groups;
}

/** `/orders/` → `/orders`; `/` → '' (matches everything). */
function trimSlash(prefix: string): string {
  return prefix.replace(/\/+$/, '');
}
