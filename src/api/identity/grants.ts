/**
 * The grants `POST /1/oauth/token` serves, given what this gateway was built
 * with: `client_credentials` always; `refresh_token` with
 * `tokens.refresh.enabled`; the token exchange (RFC 8693) and
 * `authorization_code` (the browser sign-in's code) with `sso.enabled`. The
 * one list: the token endpoint dispatches on it (anything else is
 * `unsupported_grant_type`) and the RFC 8414 metadata publishes its names, so
 * a grant cannot be served and unlisted, or listed and refused.
 */
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';
import { clientCredentialsGrant } from './oauth-client-grant.js';
import { codeGrant } from './oauth-code-grant.js';
import { exchangeGrant, TOKEN_EXCHANGE } from './oauth-exchange-grant.js';
import { refreshGrant } from './oauth-refresh-grant.js';

/** A grant's handler: the form read, the answer written (or a `GatewayError` thrown). */
export type GrantHandler = (ctx: ApiContext, form: URLSearchParams) => Promise<void>;

/** `grant_type` → its handler, in the order the metadata lists them. */
export type ServedGrants = ReadonlyMap<string, GrantHandler>;

export function servedGrants(deps: IdentityRouterDeps): ServedGrants {
  const grants = new Map<string, GrantHandler>();
  grants.set('client_credentials', (ctx, form) => clientCredentialsGrant(deps, ctx, form));
  const { refreshTokens, browserSignIn, exchangeToken } = deps;
  if (refreshTokens?.enabled === true)
    grants.set('refresh_token', (ctx, form) => refreshGrant(deps, refreshTokens, ctx, form));
  if (browserSignIn !== undefined)
    grants.set('authorization_code', (ctx, form) => codeGrant(deps, browserSignIn, ctx, form));
  if (exchangeToken !== undefined)
    grants.set(TOKEN_EXCHANGE, (ctx, form) => exchangeGrant(deps, exchangeToken, ctx, form));
  return grants;
}
