/**
 * `POST /1/oauth/token` with `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`
 * (RFC 8693): an ID token of tenant T's identity provider
 * (`subject_token_type=urn:ietf:params:oauth:token-type:id_token`) for a
 * gateway access token for T (`tenant_id=T`). No client authentication: the
 * subject token is the credential, and it is good for T only
 * (`auth/federation/exchange.ts`). Every refusal is one `invalid_grant`
 * whatever check failed (no oracle for a forger); the reason goes to the log,
 * the audit event and the metric. The provider unreachable: 503 `unavailable`.
 * At most `limits.exchange` per client IP per window: past it 429.
 */
import type { AuditActor } from '../../audit/events.js';
import type { ExchangeSeen } from '../../auth/federation/exchange.js';
import { refusalOf } from '../../auth/federation/refusals.js';
import { isGatewayError } from '../../errors.js';
import { issued } from '../../identity/issued.js';
import type { ApiContext } from '../state.js';
import { actor, issuingRequest } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { notBuilt, type Grant } from './grant.js';
import { answerOAuthToken, userGrant } from './oauth-answer.js';
import { invalidRequest, param, requiredParam } from './oauth-form.js';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export const tokenExchangeGrant: Grant = {
  type: TOKEN_EXCHANGE,
  enabled: (config) => config.sso.enabled,
  params: ['subject_token', 'subject_token_type', 'tenant_id', 'requested_token_type'],
  handle: exchangeIdToken,
};

async function exchangeIdToken(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
  const exchange = deps.exchangeToken;
  if (exchange === undefined) throw notBuilt(TOKEN_EXCHANGE, 'the token exchange');
  // `limits.exchange`: before anything may reach the tenant's provider.
  await deps.bruteForce.exchange(deps.clientIp(ctx.req));
  const subjectToken = requiredParam(form, 'subject_token');
  const subjectTokenType = requiredParam(form, 'subject_token_type');
  const tenantId = requiredParam(form, 'tenant_id');
  if (subjectTokenType !== ID_TOKEN_TYPE)
    throw invalidRequest(`Only subject_token_type=${ID_TOKEN_TYPE} is supported.`);
  // RFC 8693 §2.1: the gateway issues access tokens only.
  const wanted = param(form, 'requested_token_type');
  if (wanted !== undefined && wanted !== ACCESS_TOKEN_TYPE)
    throw invalidRequest(`Only requested_token_type=${ACCESS_TOKEN_TYPE} is issued.`);
  const seen: ExchangeSeen = {};
  let result;
  try {
    result = await exchange({ subjectToken, tenantId, grant: userGrant(deps, ctx) }, seen);
  } catch (err) {
    await recordFailure(deps, ctx, tenantId, seen, err);
    throw err;
  }
  const { granted, outcome, idp, linked, passwordEnded } = result;
  const { token, claims, user, tenant, refreshToken } = granted;
  deps.onFederatedSignIn?.(outcome);
  const who = actor(deps, ctx, user.email);
  const about = { tenant_id: tenant.tenantId, user_id: user.id, user_email: user.email };
  if (outcome === 'user_created')
    await deps.audit.record('federated_user_created', who, { ...about, issuer: idp.issuer });
  if (outcome !== 'signed_in')
    await deps.audit.record('federated_member_joined', who, {
      ...about,
      role: idp.role,
      ...(linked ? { linked: true } : {}),
      ...(passwordEnded ? { password_ended: true } : {}),
    });
  const detail = { issuer: idp.issuer };
  const issue = { kind: 'user', granted, event: 'federated_sign_in', detail } as const;
  await issued(deps, issuingRequest(deps, ctx), issue);
  answerOAuthToken(ctx, token, claims, tenant.tenantId, {
    issued_token_type: ACCESS_TOKEN_TYPE,
    refresh_token: refreshToken,
  });
}

/** A refusal or an unreachable provider: counted, and audited in the tenant's stream. */
async function recordFailure(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  tenantId: string,
  seen: ExchangeSeen,
  err: unknown,
): Promise<void> {
  const reason = refusalOf(err);
  const unavailable = isGatewayError(err) && err.code === 'unavailable';
  if (reason === undefined && !unavailable) return;
  deps.onFederatedSignIn?.(reason ?? 'unavailable');
  const who: AuditActor = actor(deps, ctx, seen.email ?? 'unverified');
  // A tenant without a provider (or no tenant at all) gets no stream of its own from a stranger.
  await deps.audit.record('federated_sign_in_refused', who, {
    ...(reason === 'no_provider' ? {} : { tenant_id: tenantId }),
    ...(seen.email === undefined ? {} : { user_email: seen.email }),
    ...(seen.issuer === undefined ? {} : { issuer: seen.issuer }),
    reason: reason ?? 'unavailable',
  });
}
