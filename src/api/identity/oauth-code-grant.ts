/**
 * `POST /1/oauth/token` with `grant_type=authorization_code` (RFC 6749 §4.1.3):
 * the one-time code of a browser sign-in (`sso-routes.ts`) for a gateway
 * access token. No client authentication (the applications are public
 * clients); the code is the credential: single use, bound to the
 * application's `redirect_uri`, and to its PKCE S256 challenge, which every
 * sign-in has (a missing or wrong `code_verifier`: RFC 7636 §4.6). Every refusal is `invalid_grant` (RFC 6749 §5.2). With
 * `tokens.refresh.enabled` the answer begins a refresh family, as a Basic
 * login does.
 */
import { issued } from '../../identity/issued.js';
import type { ApiContext } from '../state.js';
import { issuingRequest } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { notBuilt, type Grant } from './grant.js';
import { answerOAuthToken, userGrant } from './oauth-answer.js';
import { param, requiredParam } from './oauth-form.js';

export const authorizationCodeGrant: Grant = {
  type: 'authorization_code',
  enabled: (config) => config.sso.enabled,
  params: ['code', 'redirect_uri', 'code_verifier'],
  handle: redeemCode,
};

async function redeemCode(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
  const signIn = deps.browserSignIn;
  if (signIn === undefined) throw notBuilt('authorization_code', 'the browser sign-in');
  const code = requiredParam(form, 'code');
  const redirectUri = requiredParam(form, 'redirect_uri');
  const input = { code, redirectUri, codeVerifier: param(form, 'code_verifier') };
  const granted = await signIn.redeem(input, userGrant(deps, ctx));
  const { token, claims, tenant } = granted;
  const refreshToken = 'refreshToken' in granted ? granted.refreshToken : undefined;
  const detail = { via: 'browser' } as const;
  await issued(deps, issuingRequest(deps, ctx), {
    kind: 'user',
    granted,
    event: 'token_issued',
    detail,
  });
  answerOAuthToken(ctx, token, claims, tenant.tenantId, { refresh_token: refreshToken });
}
