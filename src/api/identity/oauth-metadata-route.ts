/**
 * `GET /.well-known/oauth-authorization-server`: the gateway's OAuth
 * authorization server metadata (RFC 8414), enough for a client library to
 * configure itself. `grant_types_supported` is exactly what the token
 * endpoint serves (the grant registry's enabled grants, `grants.ts`, which
 * both read); a grant other than `client_credentials` needs no client
 * authentication (`none`). PKCE is S256 only (`code_challenge_methods_supported`). The RFC 7009 revocation
 * endpoint is listed always: it ends access tokens whether or not refresh
 * tokens are on. `issuer` is `tokens.issuer`; the endpoint URLs are absolute,
 * on `publicUrl` — or, without it, on the validated origin the request was
 * addressed to (`api/public-origin.ts`): the document is then `private` (a
 * shared cache must not hand one Host's answer to another).
 */
import { Router } from '@koa/router';
import type { PublicOrigin } from '../public-origin.js';
import type { ApiState } from '../state.js';

export interface OAuthMetadataDeps {
  /** `tokens.issuer`. */
  issuer: string;
  /** `publicUrl` when configured, else the request's validated origin. */
  origin: PublicOrigin;
  /** Whether `publicUrl` is configured: the document is then the same for every request. */
  fixedOrigin: boolean;
  /** Scopes a client may ask for; omitted from the metadata when empty. */
  scopesSupported?: () => readonly string[];
}

export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server';

/** @param grantTypes the grant types the token endpoint serves (`servedGrants`' keys) */
export function createOAuthMetadataRouter(
  deps: OAuthMetadataDeps,
  grantTypes: readonly string[],
): Router<ApiState> {
  const router = new Router<ApiState>();
  const publicClients = grantTypes.some((grant) => grant !== 'client_credentials');
  router.get(OAUTH_METADATA_PATH, (ctx) => {
    const origin = deps.origin(ctx.req);
    const scopes = [...new Set(deps.scopesSupported?.() ?? [])].sort();
    ctx.set('cache-control', deps.fixedOrigin ? 'public, max-age=300' : 'private, max-age=300');
    if (!deps.fixedOrigin) ctx.set('vary', 'host, x-forwarded-host, x-forwarded-proto');
    ctx.body = {
      issuer: deps.issuer,
      token_endpoint: `${origin}/1/oauth/token`,
      jwks_uri: `${origin}/.well-known/jwks.json`,
      grant_types_supported: [...grantTypes],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        ...(publicClients ? ['none'] : []),
      ],
      // Served whether or not refresh tokens are on: an access token can be revoked too.
      revocation_endpoint: `${origin}/1/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      response_types_supported: [],
      code_challenge_methods_supported: ['S256'],
      ...(scopes.length === 0 ? {} : { scopes_supported: scopes }),
    };
  });
  return router;
}
