/**
 * The route table: longest path prefix wins, on segment boundaries (`/orders`
 * matches `/orders` and `/orders/1`, never `/ordersx`).
 *
 * A request is forwarded under the route its normalised path matches, as
 * written. But a permissive upstream may read `/ORDERS/1` or
 * `/orders;jsessionid=1/1` as `/orders/1` (Express routes ignore letter case,
 * servlet containers drop `;params`), so `matchLenient` also names the route
 * that reading falls under: its tenant rules must hold too (issue 12).
 */
import type { RouteConfig } from '../config/index.js';
import { foldCase, lenientPath } from './normalise-path.js';

/** A letter that `foldCase` changes could be there. */
const NEEDS_FOLD = /[A-Z\u0080-\uffff]/;

export interface RouteTable<R> {
  /** The route a normalised path is forwarded under. */
  match(path: string): R | undefined;
  /**
   * The route the path falls under when read permissively (letter case,
   * `;params`, trailing dots and spaces), or `undefined` when that reading
   * is the path itself. Cheap for a plain lower-case path: two regex tests.
   */
  matchLenient(path: string): R | undefined;
  /** Every route, as configured. */
  readonly all: readonly R[];
}

export function createRouteTable<R extends Pick<RouteConfig, 'prefix'>>(
  routes: readonly R[],
): RouteTable<R> {
  const byLength = routes
    .map((route) => ({ route, prefix: trimSlash(route.prefix) }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const folded = routes
    .map((route) => ({
      route,
      prefix: trimSlash(foldCase(lenientPath(route.prefix) ?? route.prefix)),
    }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const find = (table: typeof byLength, path: string): R | undefined => {
    for (const { route, prefix } of table) {
      if (prefix === '' || path === prefix || path.startsWith(`${prefix}/`)) return route;
    }
    return undefined;
  };
  return {
    all: routes,
    match: (path) => find(byLength, path),
    matchLenient(path) {
      const lenient = lenientPath(path);
      if (lenient === undefined && !NEEDS_FOLD.test(path)) return undefined;
      return find(folded, foldCase(lenient ?? path));
    },
  };
}

/** `/orders/` → `/orders`; `/` → '' (matches everything). */
function trimSlash(prefix: string): string {
  return prefix.replace(/\/+$/, '');
}
