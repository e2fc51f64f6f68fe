/**
 * The form bodies of the OAuth endpoints, as the document describes them:
 * `POST /1/oauth/token` (each grant reads its own parameters, `identity/grants.ts`)
 * and `POST /1/oauth/revoke` (RFC 7009).
 */
import { z } from 'zod';
import { requestShapes } from './registry.js';

const only = (grant: string, description: string) =>
  z
    .string()
    .optional()
    .meta({ description: `${grant} only: ${description}` });
const exchangeOnly = (description: string) => only('Token exchange', description);
const codeOnly = (description: string) => only('authorization_code', description);

export const OAuthTokenForm = z
  .object({
    grant_type: z.enum([
      'client_credentials',
      'refresh_token',
      'authorization_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]),
    refresh_token: z.string().optional().meta({ description: '`refresh_token` grant only.' }),
    subject_token: exchangeOnly(
      "an ID token of the tenant's identity provider (its `iss` the tenant's issuer, `aud` the tenant's client id, a verified e-mail in an allowed domain).",
    ),
    subject_token_type: z
      .enum(['urn:ietf:params:oauth:token-type:id_token'])
      .optional()
      .meta({ description: 'Token exchange only: the type of `subject_token`.' }),
    requested_token_type: z
      .enum(['urn:ietf:params:oauth:token-type:access_token'])
      .optional()
      .meta({ description: 'Token exchange only: optional; only an access token is issued.' }),
    tenant_id: exchangeOnly(
      'the tenant whose provider issued the subject token; the token is for it.',
    ),
    code: codeOnly('the one-time code the browser sign-in handed the application.'),
    redirect_uri: codeOnly('the `redirect_uri` of the sign-in, exactly.'),
    code_verifier: codeOnly("the PKCE verifier of the sign-in's `code_challenge` (required)."),
    scope: z.string().optional().meta({
      description:
        'Space-separated scopes, each one the client holds (client credentials) or granted at login and still granted to the member’s role (refresh: it may narrow, never widen); omitted: all of them.',
    }),
    client_id: z.string().optional().meta({ description: '`client_secret_post` only.' }),
    client_secret: z.string().optional().meta({ description: '`client_secret_post` only.' }),
  })
  .register(requestShapes, { id: 'OAuthTokenRequest' });

export const RevocationForm = z
  .object({
    token: z.string(),
    token_type_hint: z
      .string()
      .optional()
      .meta({ description: '`access_token` or `refresh_token`; not needed (the token says).' }),
  })
  .register(requestShapes, { id: 'RevocationRequest' });
