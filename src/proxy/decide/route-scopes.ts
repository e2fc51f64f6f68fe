/**
 * A route's scopes (`routes[].scopes`), compiled once per config: per
 * method, the scopes a token must hold and the refusal a token without them
 * gets, made once, so that the check on a request is a map lookup and a
 * subset test (the pipeline's `scopes` step, `pipeline.ts`).
 */
import type { RouteConfig } from '../../config/index.js';
import { GatewayError } from '../../errors.js';

/** What one method of a route asks of a token. */
export interface ScopeRequirement {
  /** Every one must be granted; empty: none. */
  readonly scopes: readonly string[];
  /** 403 `insufficient_scope`, its challenge naming `scopes` (RFC 6750 §3.1). */
  readonly refusal: GatewayError;
}

/** A route's requirements: by method, else `*`'s (undefined: a method under neither needs none). */
export interface RouteScopes {
  readonly byMethod: ReadonlyMap<string, ScopeRequirement>;
  readonly other: ScopeRequirement | undefined;
}

/** Compiles `routes[].scopes`; undefined when the route requires none. */
export function compileRouteScopes(scopes: RouteConfig['scopes']): RouteScopes | undefined {
  if (scopes === undefined) return undefined;
  const byMethod = new Map<string, ScopeRequirement>();
  let other: ScopeRequirement | undefined;
  for (const [method, list] of Object.entries(scopes)) {
    const requirement = requirementOf(method, list);
    if (method === '*') other = requirement;
    else byMethod.set(method, requirement);
  }
  // HEAD is GET without a body (RFC 9110 §9.3.2): it needs what GET needs, unless listed.
  const get = byMethod.get('GET');
  if (get !== undefined && !byMethod.has('HEAD')) byMethod.set('HEAD', get);
  return { byMethod, other };
}

function requirementOf(method: string, list: readonly string[]): ScopeRequirement {
  const scopes = Object.freeze([...new Set(list)].sort());
  const named = scopes.join(' ');
  const methods = method === '*' ? 'this method' : method;
  return {
    scopes,
    refusal: new GatewayError(
      'insufficient_scope',
      `The token lacks a scope this route requires for ${methods}: ${named}.`,
      { headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${named}"` } },
    ),
  };
}

/**
 * Whether `granted` holds what `route` asks for `method`.
 * @throws GatewayError `insufficient_scope` when it does not
 */
export function demandScopes(route: RouteScopes, method: string, granted: readonly string[]): void {
  const requirement = route.byMethod.get(method) ?? route.other;
  if (requirement === undefined) return;
  for (const scope of requirement.scopes) {
    if (!granted.includes(scope)) throw requirement.refusal;
  }
}
