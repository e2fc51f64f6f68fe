/**
 * `POST /1/oauth/token` with `grant_type=client_credentials` (RFC 6749 §4.4):
 * a machine client's token. The client authenticates by HTTP Basic
 * (`client_secret_basic`, id and secret form-urlencoded, §2.3.1) or in the
 * body (`client_secret_post`), exactly one of the two.
 */
import { parseBasicAuthorization } from '../../auth/credentials/basic.js';
import { invalidClient } from '../../auth/clients/client-credentials.js';
import { isGatewayError } from '../../errors.js';
import { issued } from '../../identity/issued.js';
import type { ApiContext } from '../state.js';
import { actor, issuingRequest } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import type { Grant } from './grant.js';
import { answerOAuthToken } from './oauth-answer.js';
import { invalidRequest, param } from './oauth-form.js';

export const clientCredentialsGrant: Grant = {
  type: 'client_credentials',
  enabled: () => true,
  params: ['scope', 'client_id', 'client_secret'],
  handle: issueClientToken,
};

async function issueClientToken(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
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
  await issued(deps, issuingRequest(deps, ctx), { kind: 'client', granted });
  answerOAuthToken(ctx, granted.token, granted.claims, granted.client.tenantId);
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
    const { id, secret } = parseBasicAuthorization(authorization);
    return { clientId: formDecode(id), clientSecret: formDecode(secret) };
  } catch (err) {
    throw isGatewayError(err) || err instanceof URIError ? invalidClient() : err;
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
