/** OpenAPI operations on tokens: issuing one (two paths alike), the OAuth grants, logging out, RFC 7009 revocation. */
import {
  BAD_INPUT,
  BASIC_REFUSED,
  BEARER_REFUSED,
  BUG,
  type Json,
  json,
  ref,
  refusal,
  REQUEST_ID_HEADER,
  STORE_DOWN,
  THROTTLED,
} from './answers.js';

const tokenOperation = (operationId: string, summary: string): Json => ({
  operationId,
  summary,
  tags: ['identity'],
  security: [{ basic: [] }],
  parameters: [
    {
      name: 'tenant_id',
      in: 'query',
      required: true,
      description: 'The tenant the token is for; exactly once.',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': {
      description:
        'A bearer token for the user in that tenant; with `tokens.refresh.enabled`, also the first `refresh_token` of a new family.',
      headers: REQUEST_ID_HEADER,
      content: json(ref('TokenResponse')),
    },
    '400': BAD_INPUT,
    '401': BASIC_REFUSED,
    '403': refusal(
      'The user is not a member of that tenant, or it does not exist (one answer for both).',
      'tenant_access_denied',
    ),
    '429': THROTTLED,
    '500': BUG,
    '503': STORE_DOWN,
  },
});

/** `/1/token` */
export function tokenPath(): Json {
  return {
    get: tokenOperation('issueToken', 'A bearer token for one of the user’s tenants'),
    delete: {
      operationId: 'revokeToken',
      summary: 'Log out: this token stops working at once, on every instance',
      tags: ['identity'],
      security: [{ bearer: [] }],
      responses: {
        '204': {
          description:
            'Revoked; a token issued with a refresh token (`fid`) ends its refresh family too.',
        },
        '401': BEARER_REFUSED,
        '503': STORE_DOWN,
      },
    },
  };
}

/** `/1/oauth/token` */
export function oauthTokenPath(): Json {
  return {
    get: tokenOperation('issueTokenOAuth', 'The same as GET /1/token'),
    post: clientCredentialsOperation(),
  };
}

/**
 * `POST /1/oauth/token`: the client-credentials grant of machine clients (RFC
 * 6749 §4.4) and, with `tokens.refresh.enabled`, the refresh-token grant (§6).
 * One operation (its id kept from when it had one grant).
 */
function clientCredentialsOperation(): Json {
  return {
    operationId: 'clientCredentialsToken',
    summary:
      'The OAuth token endpoint: client credentials, refresh tokens, the token exchange, the browser sign-in code',
    description:
      "`client_credentials`: client authentication by HTTP Basic (`client_secret_basic`: id and secret each form-urlencoded, RFC 6749 §2.3.1) or in the body (`client_secret_post`), exactly one of the two. `refresh_token` (with `tokens.refresh.enabled`): the refresh token is the credential, no client authentication (a `client_id` is ignored); the answer carries the successor, the presented token is used up — presented again within 10 s it gives the same successor, later it revokes its whole family (RFC 9700 §4.14.2). `urn:ietf:params:oauth:grant-type:token-exchange` (with `sso.enabled`, RFC 8693): an ID token of the tenant's own identity provider for a gateway token of that tenant, the user created or joined at first sign-in; no client authentication (the subject token is the credential). `authorization_code` (with `sso.enabled`): the one-time code a browser sign-in (`/1/tenants/{tenant_id}/sso/login`) handed the application, single use, with the same `redirect_uri` and the `code_verifier` of the sign-in's S256 `code_challenge` (required: a missing or wrong one is `invalid_grant`, RFC 7636 §4.6); no client authentication. The token exchange takes a point of `limits.exchange` per client IP before the provider is asked (429 beyond). Never cached (`Cache-Control: no-store`, `Pragma: no-cache`).",
    tags: ['identity'],
    security: [{ basic: [] }, {}],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['grant_type'],
            properties: {
              grant_type: {
                type: 'string',
                enum: [
                  'client_credentials',
                  'refresh_token',
                  'authorization_code',
                  'urn:ietf:params:oauth:grant-type:token-exchange',
                ],
              },
              refresh_token: { type: 'string', description: '`refresh_token` grant only.' },
              ...tokenExchangeParameters(),
              ...codeParameters(),
              scope: {
                type: 'string',
                description:
                  'Space-separated scopes, each one the client holds (client credentials) or granted at login and still granted to the member’s role (refresh: it may narrow, never widen); omitted: all of them.',
              },
              client_id: { type: 'string', description: '`client_secret_post` only.' },
              client_secret: { type: 'string', description: '`client_secret_post` only.' },
            },
          },
        },
      },
    },
    responses: {
      '200': {
        description:
          'An access token for the client, in its tenant, with the scopes granted; or, for a refresh, a new access token for the user and the successor refresh token; for a browser sign-in code, the user token (with a refresh token when `tokens.refresh.enabled`).',
        headers: REQUEST_ID_HEADER,
        content: json({
          oneOf: [
            ref('ClientTokenResponse'),
            ref('RefreshTokenResponse'),
            ref('TokenExchangeResponse'),
          ],
        }),
      },
      '400': refusal(
        "A body not form-encoded, a parameter missing or repeated, two authentication methods; a scope the client does not hold or the login did not grant; a refresh token malformed, unknown, expired, of an ended session, or used (then its family is revoked); a browser sign-in code unknown, used, expired, for another `redirect_uri` or without its `code_verifier`; a subject token not accepted for the tenant (one answer whatever the check: its issuer not the tenant's provider, signature, audience, expiry, e-mail, domain, a user who may not be linked); an unsupported grant type.",
        'invalid_request',
        'invalid_scope',
        'invalid_grant',
        'unsupported_grant_type',
      ),
      '401': refusal(
        'Unknown client, wrong secret or expired client (one answer for all), with `WWW-Authenticate: Basic realm="tenant-gateway"`.',
        'invalid_client',
      ),
      '429': THROTTLED,
      '503': refusal(
        "The store is unreachable, or (token exchange) the tenant's identity provider's discovery document or keys could not be fetched, fetched within `sso.failureCacheSeconds` of a failure, or are refused (a non-public address without `sso.allowPrivateIssuers`, an authorization endpoint off the issuer's origin).",
        'unavailable',
      ),
    },
  };
}

/** The browser sign-in code's form parameters (RFC 6749 §4.1.3, RFC 7636 §4.5). */
function codeParameters(): Json {
  const codeOnly = (description: string) => ({
    type: 'string',
    description: `authorization_code only: ${description}`,
  });
  return {
    code: codeOnly('the one-time code the browser sign-in handed the application.'),
    redirect_uri: codeOnly('the `redirect_uri` of the sign-in, exactly.'),
    code_verifier: codeOnly("the PKCE verifier of the sign-in's `code_challenge` (required)."),
  };
}

/** `/1/oauth/revoke` (RFC 7009). */
export function oauthRevokePath(): Json {
  return {
    post: {
      operationId: 'revokeOAuthToken',
      summary:
        'End a token (RFC 7009): a refresh token its family, an access token itself and its family',
      description:
        'The token is the credential: no client authentication. A refresh token of a family (current, or just rotated) ends the family and every access token issued in it; an access token that is alive is revoked, with its refresh family. Anything else — unknown, expired, made up — changes nothing and gets the same 200 (RFC 7009 §2.2). Confirmed on every instance (lease mode) before the answer.',
      tags: ['identity'],
      security: [{}],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['token'],
              properties: {
                token: { type: 'string' },
                token_type_hint: {
                  type: 'string',
                  description: '`access_token` or `refresh_token`; not needed (the token says).',
                },
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Revoked, or nothing to revoke (one answer for both).' },
        '400': BAD_INPUT,
        '503': STORE_DOWN,
      },
    },
  };
}

/** The token exchange's form parameters (RFC 8693 §2.1), with `sso.enabled`. */
function tokenExchangeParameters(): Json {
  const exchangeOnly = (description: string) => ({
    type: 'string',
    description: `Token exchange only: ${description}`,
  });
  return {
    subject_token: exchangeOnly(
      "an ID token of the tenant's identity provider (its `iss` the tenant's issuer, `aud` the tenant's client id, a verified e-mail in an allowed domain).",
    ),
    subject_token_type: {
      ...exchangeOnly('the type of `subject_token`.'),
      enum: ['urn:ietf:params:oauth:token-type:id_token'],
    },
    requested_token_type: {
      ...exchangeOnly('optional; only an access token is issued.'),
      enum: ['urn:ietf:params:oauth:token-type:access_token'],
    },
    tenant_id: exchangeOnly(
      'the tenant whose provider issued the subject token; the token is for it.',
    ),
  };
}
