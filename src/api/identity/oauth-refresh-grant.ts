/**
 * `POST /1/oauth/token` with `grant_type=refresh_token` (RFC 6749 §6): the
 * refresh token is the credential. It was issued at a user's Basic login, to
 * no client, so there is no client to authenticate: a `client_id` a public
 * client library sends along is ignored (docs/identity-api.md#refresh-tokens).
 * The answer is the OAuth token response with the successor `refresh_token`;
 * a refusal is 400 `invalid_grant`, and a reuse is recorded
 * (`refresh_token_reused`: the family, user and tenant, never the token).
 */
import { RefreshRefused } from '../../auth/refresh/refresh-grant.js';
import { issued } from '../../identity/issued.js';
import type { ApiContext } from '../state.js';
import { actor, issuingRequest } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { notBuilt, type Grant } from './grant.js';
import { answerOAuthToken } from './oauth-answer.js';
import { param, requiredParam } from './oauth-form.js';

export const refreshTokenGrant: Grant = {
  type: 'refresh_token',
  enabled: (config) => config.tokens.refresh.enabled,
  params: ['refresh_token', 'scope'],
  handle: refresh,
};

async function refresh(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
  const refreshTokens = deps.refreshTokens;
  if (refreshTokens === undefined) throw notBuilt('refresh_token', 'refresh tokens');
  const refreshToken = requiredParam(form, 'refresh_token');
  let refreshed;
  try {
    refreshed = await refreshTokens.refresh(refreshToken, param(form, 'scope'));
  } catch (err) {
    if (err instanceof RefreshRefused) await refused(deps, ctx, err);
    throw err;
  }
  deps.onRefresh?.(refreshed.outcome);
  const issue = { kind: 'user', granted: refreshed, event: 'token_refreshed' } as const;
  await issued(deps, issuingRequest(deps, ctx), issue);
  const { token, claims, tenant } = refreshed;
  answerOAuthToken(ctx, token, claims, tenant.tenantId, {
    refresh_token: refreshed.refreshToken,
  });
}

/** Counts the refusal; a reuse is audited in the family's tenant stream. */
async function refused(deps: IdentityRouterDeps, ctx: ApiContext, err: RefreshRefused) {
  deps.onRefresh?.(err.outcome);
  const family = err.family;
  if (err.outcome !== 'reused' || family === undefined) return;
  const user = await deps.store.users.getUser(family.userId).catch(() => null);
  await deps.audit.record('refresh_token_reused', actor(deps, ctx, user?.email ?? family.userId), {
    tenant_id: family.tenantId,
    user_id: family.userId,
    ...(user === null ? {} : { user_email: user.email }),
    family_id: family.familyId,
  });
}
