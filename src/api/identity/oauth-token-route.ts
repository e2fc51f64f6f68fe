/**
 * `POST /1/oauth/token`: the OAuth client-credentials grant (RFC 6749 §4.4)
 * for machine clients; with `tokens.refresh.enabled` the refresh-token grant
 * (RFC 6749 §6, `oauth-refresh-grant.ts`); with `sso.enabled` the token
 * exchange (RFC 8693, `oauth-exchange-grant.ts`) and the browser sign-in's
 * code (`oauth-code-grant.ts`). A form-encoded body; the client authenticates by HTTP
 * Basic (`client_secret_basic`, id and secret form-urlencoded, §2.3.1) or in
 * the body (`client_secret_post`), exactly one of the two. Errors are the
 * RFC 6749 §5.2 body the gateway gives every refusal.
 */
import type { Router } from '@koa/router';
import { parseBasicAuthorization } from '../../auth/basic.js';
import { invalidClient } from '../../auth/client-credentials.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { answerOAuthToken } from './oauth-answer.js';
import { codeGrant } from './oauth-code-grant.js';
import { exchangeGrant, TOKEN_EXCHANGE } from './oauth-exchange-grant.js';
import { invalidRequest, param, readForm } from './oauth-form.js';
import { refreshGrant } from './oauth-refresh-grant.js';

export function addOAuthTokenRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.post('/oauth/token', (ctx) => grant(deps, ctx));
}

async function grant(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const form = await readForm(ctx, deps.bodyLimit);
  const grantType = param(form, 'grant_type');
  if (grantType === undefined) throw invalidRequest('The grant_type parameter is required.');
  if (grantType === 'refresh_token' && deps.refreshTokens?.enabled === true)
    return refreshGrant(deps, deps.refreshTokens, ctx, form);
  if (grantType === TOKEN_EXCHANGE && deps.exchangeToken !== undefined)
    return exchangeGrant(deps, deps.exchangeToken, ctx, form);
  if (grantType === 'authorization_code' && deps.browserSignIn !== undefined)
    return codeGrant(deps, deps.browserSignIn, ctx, form);
  if (grantType !== 'client_credentials') {
    const supported = [
      'client_credentials',
      ...(deps.refreshTokens?.enabled === true ? ['refresh_token'] : []),
      ...(deps.browserSignIn === undefined ? [] : ['authorization_code']),
      ...(deps.exchangeToken === undefined ? [] : [TOKEN_EXCHANGE]),
    ];
    throw new GatewayError(
      'unsupported_grant_type',
      supported.length === 1
        ? 'Only client_credentials is supported.'
        : `Only ${supported.join(', ')} are supported.`,
    );
  }
  const { clientId, clientSecret } = clientCredentials(ctx, form);
  const clientIp = deps.clientIp(ctx.req);
  const scope = param(form, 'scope');
  let granted;
  try {
    granted = await deps.grantClientToken({ clientId, clientSecret, scope, clientIp });
  } catch (err) {
    if (isGatewayError(err) && (err.code === 'invalid_client' || err.code === 'too_many_requests'))
      await deps.audit.record('client_auth_failed', actor(deps, ctx, clientId), {
        client_id: clientId,
      });
    throw err;
  }
  const { token, claims, client, scopes } = granted;
  ctx.state.scope.userId = client.clientId;
  ctx.state.scope.tenantId = client.tenantId;
  ctx.state.scope.kind = 'client';
  deps.onTokenIssued?.('client');
  await deps.audit.record('client_token_issued', actor(deps, ctx, client.clientId), {
    tenant_id: client.tenantId,
    client_id: client.clientId,
    scopes,
    jti: claims.jti,
  });
  answerOAuthToken(ctx, token, claims, client.tenantId);
}

/** The client's id and secret, by exactly one method. */
function clientCredentials(
  ctx: ApiContext,
  form: URLSearchParams,
): { clientId: string; clientSecret: string } {
  const authorization = ctx.get('authorization');
  const postId = param(form, 'client_id');
  const postSecret = param(form, 'client_secret');
  const inBody = postId !== undefined || postSecret !== undefined;
  if (authorization !== '') {
    if (inBody) throw invalidRequest('The client authenticated by more than one method.');
    return fromBasic(authorization);
  }
  if (postId === undefined || postSecret === undefined) throw invalidClient();
  return { clientId: postId, clientSecret: postSecret };
}

/** RFC 6749 §2.3.1: Basic's user-id and password are each form-urlencoded. */
function fromBasic(authorization: string): { clientId: string; clientSecret: string } {
  try {
    const { email, password } = parseBasicAuthorization(authorization);
    return { clientId: formDecode(email), clientSecret: formDecode(password) };
  } catch (err) {
    throw isGatewayError(err) || err instanceof URIError ? invalidClient() : err;
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
