/**
 * The route table: longest path prefix wins, on segment boundaries (`/orders`
 * matches `/orders` and `/orders/1`, never `/ordersx`).
 */
import type { RouteConfig } from '../config/index.js';

export interface RouteTable<R> {
  match(path: string): R | undefined;
}

export function createRouteTable<R extends Pick<RouteConfig, 'prefix'>>(
  routes: readonly R[],
): RouteTable<R> {
  const byLength = routes
    .map((route) => ({ route, prefix: trimSlash(route.prefix) }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  return {
    match(path) {
      for (const { route, prefix } of byLength) {
        if (prefix === '' || path === prefix || path.startsWith(`${prefix}/`)) return route;
      }
      return undefined;
    },
  };
}

/** `/orders/` → `/orders`; `/` → '' (matches everything). */
function trimSlash(prefix: string): string {
  return prefix.replace(/\/+$/, '');
}
