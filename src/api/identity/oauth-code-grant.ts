/**
 * `POST /1/oauth/token` with `grant_type=authorization_code` (RFC 6749 §4.1.3):
 * the one-time code of a browser sign-in (`sso-routes.ts`) for a gateway
 * access token. No client authentication (the applications are public
 * clients); the code is the credential: single use, bound to the
 * application's `redirect_uri`, and to its PKCE challenge when it sent one
 * (RFC 7636 §4.6). Every refusal is `invalid_grant` (RFC 6749 §5.2). With
 * `tokens.refresh.enabled` the answer begins a refresh family, as a Basic
 * login does.
 */
import type { BrowserSignIn } from '../../auth/federation/browser-sign-in.js';
import type { ApiContext } from '../state.js';
import { actor } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { answerOAuthToken, userGrant } from './oauth-answer.js';
import { invalidRequest, param } from './oauth-form.js';

export async function codeGrant(
  deps: IdentityRouterDeps,
  signIn: BrowserSignIn,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
  const code = param(form, 'code');
  const redirectUri = param(form, 'redirect_uri');
  if (code === undefined || code === '') throw invalidRequest('The code parameter is required.');
  if (redirectUri === undefined || redirectUri === '')
    throw invalidRequest('The redirect_uri parameter is required.');
  const input = { code, redirectUri, codeVerifier: param(form, 'code_verifier') };
  const granted = await signIn.redeem(input, userGrant(deps));
  const { token, claims, user, tenant } = granted;
  const refreshToken = 'refreshToken' in granted ? granted.refreshToken : undefined;
  ctx.state.scope.userId = user.id;
  ctx.state.scope.tenantId = tenant.tenantId;
  deps.onTokenIssued?.('user');
  await deps.audit.record('token_issued', actor(deps, ctx, user.email), {
    tenant_id: tenant.tenantId,
    user_id: user.id,
    user_email: user.email,
    jti: claims.jti,
    ...(claims.fid === undefined ? {} : { family_id: claims.fid }),
    via: 'browser',
  });
  answerOAuthToken(ctx, token, claims, tenant.tenantId, { refresh_token: refreshToken });
}
