/**
 * The shapes of issued tokens: a Basic login's answer, and the OAuth token
 * endpoint's (RFC 6749 §5.1, RFC 8693 §2.2.1), each with the tenant.
 */
import { z } from 'zod';
import { TenantType } from './tenants.js';
import { answerShapes } from './registry.js';

const expiresIn = z.int().min(1).meta({ description: 'seconds' });

export const TokenResponse = z
  .strictObject({
    access_token: z.string().meta({ description: 'A JWT (`typ: at+jwt`)' }),
    token_type: z.literal('Bearer'),
    expires_in: expiresIn,
    user_email: z.string(),
    user_id: z.string(),
    tenant_id: z.string(),
    tenant_name: z.string(),
    tenant_type: TenantType,
    scope: z.string().meta({
      description:
        "The granted scopes, space-separated and sorted: those of the member's role (`authorization.roles`); empty: none",
    }),
    refresh_token: z.string().optional().meta({
      description:
        'With `tokens.refresh.enabled`: the first refresh token of a new family (`tgr_…`), for `POST /1/oauth/token` `grant_type=refresh_token`.',
    }),
  })
  .register(answerShapes, { id: 'TokenResponse' });

/** The client-credentials token response (RFC 6749 §5.1, plus the tenant). */
export const ClientTokenResponse = z
  .strictObject({
    access_token: z.string().meta({ description: 'An RFC 9068 JWT.' }),
    token_type: z.literal('Bearer'),
    expires_in: z.int().min(1),
    scope: z.string().meta({ description: 'The scopes granted, space-separated.' }),
    tenant_id: z.string(),
  })
  .register(answerShapes, { id: 'ClientTokenResponse' });

/** The refresh-token grant's answer: the successor refresh token with it. */
export const RefreshTokenResponse = ClientTokenResponse.extend({
  scope: z.string().meta({
    description:
      'The scopes granted at login that the member’s role still grants (the live config), or the part of them the request asked for.',
  }),
  refresh_token: z
    .string()
    .meta({ description: 'The successor (`tgr_…`); the one presented is used up.' }),
}).register(answerShapes, { id: 'RefreshTokenResponse' });

/** The token exchange's answer (RFC 8693 §2.2.1, plus the tenant). */
export const TokenExchangeResponse = ClientTokenResponse.extend({
  issued_token_type: z.literal('urn:ietf:params:oauth:token-type:access_token'),
  scope: z.string().meta({
    description: "The scopes of the member's role (`authorization.roles`), space-separated.",
  }),
  refresh_token: z.string().optional().meta({
    description:
      'With `tokens.refresh.enabled`: the first refresh token (`tgr_…`) of a new refresh family, as a Basic login gets.',
  }),
}).register(answerShapes, { id: 'TokenExchangeResponse' });

/** What `POST /1/oauth/token` answers, whatever the grant. */
export const OAuthTokenAnswer = z
  .union([ClientTokenResponse, RefreshTokenResponse, TokenExchangeResponse])
  .register(answerShapes, { id: 'OAuthTokenResponse' });
