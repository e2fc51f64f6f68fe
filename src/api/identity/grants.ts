/**
 * The grant registry: every grant `POST /1/oauth/token` knows, each in its own
 * file (`grant.ts`). A gateway serves those its config enables:
 * `client_credentials` always; `refresh_token` with `tokens.refresh.enabled`;
 * `authorization_code` (the browser sign-in's code) and the token exchange
 * (RFC 8693) with `sso.enabled`. The token endpoint dispatches on the served
 * list (anything else is `unsupported_grant_type`) and the RFC 8414 metadata
 * publishes its names, so a grant cannot be served and unlisted, or listed
 * and refused.
 */
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';
import type { Grant, GrantsConfig } from './grant.js';
import { clientCredentialsGrant } from './oauth-client-grant.js';
import { authorizationCodeGrant } from './oauth-code-grant.js';
import { tokenExchangeGrant } from './oauth-exchange-grant.js';
import { refreshTokenGrant } from './oauth-refresh-grant.js';

/** Every grant, in the order the metadata lists them. */
export const GRANTS: readonly Grant[] = [
  clientCredentialsGrant,
  refreshTokenGrant,
  authorizationCodeGrant,
  tokenExchangeGrant,
];

/** A served grant's handler: the form read, the answer written (or a `GatewayError` thrown). */
export type GrantHandler = (ctx: ApiContext, form: URLSearchParams) => Promise<void>;

/** `grant_type` → its handler, in the order the metadata lists them. */
export type ServedGrants = ReadonlyMap<string, GrantHandler>;

/** The grants a gateway with `config` serves, each bound to `deps`. */
export function servedGrants(config: GrantsConfig, deps: IdentityRouterDeps): ServedGrants {
  return new Map(
    GRANTS.filter((grant) => grant.enabled(config)).map((grant) => [
      grant.type,
      (ctx: ApiContext, form: URLSearchParams) => grant.handle(deps, ctx, form),
    ]),
  );
}
