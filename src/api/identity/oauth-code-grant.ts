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
import type { BrowserSignIn } from '../../auth/federation/browser-sign-in.js';
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';
import { answerOAuthToken, userGrant, userTokenIssued } from './oauth-answer.js';
import { param, requiredParam } from './oauth-form.js';

export async function codeGrant(
  deps: IdentityRouterDeps,
  signIn: BrowserSignIn,
  ctx: ApiContext,
  form: URLSearchParams,
): Promise<void> {
  const code = requiredParam(form, 'code');
  const redirectUri = requiredParam(form, 'redirect_uri');
  const input = { code, redirectUri, codeVerifier: param(form, 'code_verifier') };
  const granted = await signIn.redeem(input, userGrant(deps));
  const { token, claims, tenant } = granted;
  const refreshToken = 'refreshToken' in granted ? granted.refreshToken : undefined;
  await userTokenIssued(deps, ctx, granted, 'browser');
  answerOAuthToken(ctx, token, claims, tenant.tenantId, { refresh_token: refreshToken });
}
