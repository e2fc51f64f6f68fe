/**
 * `GET /.well-known/oauth-authorization-server`: the gateway's OAuth
 * authorization server metadata (RFC 8414), enough for a client library to
 * find the token endpoint and run the client-credentials grant — and, with
 * `tokens.refresh.enabled`, the refresh-token grant (no client
 * authentication: `none`). The RFC 7009 revocation endpoint is listed always:
 * it ends access tokens whether or not refresh tokens are on. `issuer` is
 * `tokens.issuer`; the endpoint URLs are absolute, on the origin the request
 * was addressed to: its Host and scheme, or, from a trusted proxy
 * (`trustedProxies`), the first `X-Forwarded-Host` / `X-Forwarded-Proto`
 * entry. No configuration key names the gateway's public URL, so this is the
 * one source of it.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Router } from '@koa/router';
import type { ApiState } from '../state.js';

export interface OAuthMetadataDeps {
  /** `tokens.issuer`. */
  issuer: string;
  /** Whether a peer is a trusted proxy. */
  trusted: (peer: string | undefined) => boolean;
  /** Scopes a client may ask for; omitted from the metadata when empty. */
  scopesSupported?: () => readonly string[];
  /** `tokens.refresh.enabled`. */
  refreshEnabled?: boolean;
  /** Whether the token exchange (RFC 8693) is offered (`sso.enabled`). */
  tokenExchange?: boolean;
}

export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server';

export function createOAuthMetadataRouter(deps: OAuthMetadataDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get(OAUTH_METADATA_PATH, (ctx) => {
    const origin = requestOrigin(ctx.req, deps.trusted);
    const scopes = [...new Set(deps.scopesSupported?.() ?? [])].sort();
    ctx.set('cache-control', 'public, max-age=300');
    ctx.set('vary', 'host, x-forwarded-host, x-forwarded-proto');
    const refresh = deps.refreshEnabled === true;
    ctx.body = {
      issuer: deps.issuer,
      token_endpoint: `${origin}/1/oauth/token`,
      jwks_uri: `${origin}/.well-known/jwks.json`,
      grant_types_supported: [
        'client_credentials',
        ...(refresh ? ['refresh_token'] : []),
        ...(deps.tokenExchange === true ? ['urn:ietf:params:oauth:grant-type:token-exchange'] : []),
      ],
      token_endpoint_auth_methods_supported: [
        'client_secret_basic',
        'client_secret_post',
        ...(refresh ? ['none'] : []),
      ],
      // Served whether or not refresh tokens are on: an access token can be revoked too.
      revocation_endpoint: `${origin}/1/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      response_types_supported: [],
      ...(scopes.length === 0 ? {} : { scopes_supported: scopes }),
    };
  });
  return router;
}

/** `scheme://host` the request was addressed to (see the file header). */
export function requestOrigin(
  req: IncomingMessage,
  trusted: (peer: string | undefined) => boolean,
): string {
  const fromProxy = trusted(req.socket.remoteAddress);
  const first = (value: string | string[] | undefined): string | undefined => {
    const text = Array.isArray(value) ? value[0] : value;
    const entry = text?.split(',')[0]?.trim();
    return entry === '' ? undefined : entry;
  };
  const proto =
    (fromProxy ? first(req.headers['x-forwarded-proto']) : undefined) ??
    ((req.socket as TLSSocket).encrypted ? 'https' : 'http');
  const host = (fromProxy ? first(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host;
  return `${proto === 'https' ? 'https' : 'http'}://${host ?? 'localhost'}`;
}
