/**
 * The JSON shapes of issued tokens, each typed by its answer's schema
 * (`schemas/tokens.ts`): a Basic login's answer, and the OAuth token
 * endpoint's (RFC 6749 §5.1, RFC 8693 §2.2.1).
 */
import type { z } from 'zod';
import type { GrantedToken } from '../auth/accounts.js';
import type { AccessTokenClaims } from '../auth/tokens/tokens.js';
import type { OAuthTokenAnswer, TokenExchangeResponse, TokenResponse } from './schemas/tokens.js';

/** A Basic login's token, with the first refresh token of its family when one began. */
export function loginToken(
  { token, claims, user, tenant }: GrantedToken,
  refreshToken: string | undefined,
): z.infer<typeof TokenResponse> {
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: claims.exp - claims.iat,
    user_email: user.email,
    user_id: user.id,
    tenant_id: tenant.tenantId,
    tenant_name: tenant.name,
    tenant_type: tenant.type,
    scope: claims.scope ?? '',
    ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
  };
}

/** What a grant adds to the OAuth token response: a refresh token, RFC 8693's token type. */
export type OAuthTokenExtras = Partial<
  Pick<z.infer<typeof TokenExchangeResponse>, 'refresh_token' | 'issued_token_type'>
>;

/** The OAuth token response: the token, its scopes and tenant, then what the grant adds. */
export function oauthToken(
  token: string,
  claims: AccessTokenClaims,
  tenantId: string,
  extra: OAuthTokenExtras = {},
): z.infer<typeof OAuthTokenAnswer> {
  const body = {
    access_token: token,
    token_type: 'Bearer' as const,
    expires_in: claims.exp - claims.iat,
    scope: claims.scope ?? '',
    tenant_id: tenantId,
  };
  const { refresh_token, issued_token_type } = extra;
  if (issued_token_type !== undefined)
    return {
      ...body,
      issued_token_type,
      ...(refresh_token === undefined ? {} : { refresh_token }),
    };
  return refresh_token === undefined ? body : { ...body, refresh_token };
}
