/**
 * `POST /1/oauth/token`: the OAuth client-credentials grant (RFC 6749 §4.4)
 * for machine clients. A form-encoded body; the client authenticates by HTTP
 * Basic (`client_secret_basic`, id and secret form-urlencoded, §2.3.1) or in
 * the body (`client_secret_post`), exactly one of the two. Errors are the
 * RFC 6749 §5.2 body the gateway gives every refusal.
 */
import type { Router } from '@koa/router';
import getRawBody from 'raw-body';
import { parseBasicAuthorization } from '../../auth/basic.js';
import { invalidClient } from '../../auth/client-credentials.js';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

const FORM = 'application/x-www-form-urlencoded';

export function addOAuthTokenRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.post('/oauth/token', (ctx) => grant(deps, ctx));
}

async function grant(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const form = await readForm(ctx, deps.bodyLimit);
  const grantType = param(form, 'grant_type');
  if (grantType === undefined) throw invalidRequest('The grant_type parameter is required.');
  if (grantType !== 'client_credentials') {
    throw new GatewayError('unsupported_grant_type', 'Only client_credentials is supported.');
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
  noStore(ctx);
  ctx.set('pragma', 'no-cache');
  ctx.body = {
    access_token: token,
    token_type: 'Bearer',
    expires_in: claims.exp - claims.iat,
    scope: scopes.join(' '),
    tenant_id: client.tenantId,
  };
}

const invalidRequest = (description: string) => new GatewayError('invalid_request', description);

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

/** One value, or undefined when absent; a repeated parameter is refused (RFC 6749 §3.2). */
function param(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  if (values.length > 1) throw invalidRequest(`The ${name} parameter is repeated.`);
  return values[0];
}

async function readForm(ctx: ApiContext, limit: number): Promise<URLSearchParams> {
  if (ctx.is(FORM) !== FORM) throw invalidRequest(`The body must be ${FORM}.`);
  let text: string;
  try {
    text = await getRawBody(ctx.req, {
      limit,
      encoding: 'utf8',
      length: ctx.get('content-length') || undefined,
    });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw new GatewayError('payload_too_large', `The request body is over ${limit} bytes.`);
    throw new GatewayError('invalid_request', 'The request body could not be read.', {
      cause: err,
    });
  }
  return new URLSearchParams(text);
}
