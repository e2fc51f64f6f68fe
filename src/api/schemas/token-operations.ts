/**
 * The operations on tokens: issuing one (two paths alike), the OAuth token
 * endpoint's grants, logging out, RFC 7009 revocation.
 */
import { z } from 'zod';
import { ANONYMOUS, answer, BASIC, BEARER, refusal, type Operation } from './operation.js';
import { OAuthTokenForm, RevocationForm } from './oauth-forms.js';
import {
  BAD_INPUT,
  BASIC_REFUSED,
  BEARER_REFUSED,
  BUG,
  STORE_DOWN,
  THROTTLED,
} from './refusals.js';
import { OAuthTokenAnswer, TokenResponse } from './tokens.js';

const FORM = 'application/x-www-form-urlencoded';

/** The query of a Basic login: `tenant_id`, exactly once. */
export const TokenQuery = z.object({
  tenant_id: z.string().min(1).meta({ description: 'The tenant the token is for; exactly once.' }),
});

const issue = (operationId: string, path: string, summary: string): Operation => ({
  method: 'get',
  path,
  operationId,
  summary,
  tags: ['identity'],
  security: BASIC,
  query: TokenQuery,
  answers: {
    200: answer(
      'A bearer token for the user in that tenant; with `tokens.refresh.enabled`, also the first `refresh_token` of a new family.',
      TokenResponse,
    ),
  },
  refusals: {
    400: BAD_INPUT,
    401: BASIC_REFUSED,
    403: refusal(
      'The user is not a member of that tenant, or it does not exist (one answer for both).',
      'tenant_access_denied',
    ),
    429: THROTTLED,
    500: BUG,
    503: STORE_DOWN,
  },
});

export const issueToken = issue(
  'issueToken',
  '/1/token',
  'A bearer token for one of the user’s tenants',
);
export const issueTokenOAuth = issue(
  'issueTokenOAuth',
  '/1/oauth/token',
  'The same as GET /1/token',
);

export const revokeToken: Operation = {
  method: 'delete',
  path: '/1/token',
  operationId: 'revokeToken',
  summary: 'Log out: this token stops working at once, on every instance',
  tags: ['identity'],
  security: BEARER,
  answers: {
    204: {
      description:
        'Revoked; a token issued with a refresh token (`fid`) ends its refresh family too.',
    },
  },
  refusals: { 401: BEARER_REFUSED, 503: STORE_DOWN },
};

/** `POST /1/oauth/token`: its id kept from when it had one grant. */
export const oauthToken: Operation = {
  method: 'post',
  path: '/1/oauth/token',
  operationId: 'clientCredentialsToken',
  summary:
    'The OAuth token endpoint: client credentials, refresh tokens, the token exchange, the browser sign-in code',
  description:
    "`client_credentials`: client authentication by HTTP Basic (`client_secret_basic`: id and secret each form-urlencoded, RFC 6749 §2.3.1) or in the body (`client_secret_post`), exactly one of the two. `refresh_token` (with `tokens.refresh.enabled`): the refresh token is the credential, no client authentication (a `client_id` is ignored); the answer carries the successor, the presented token is used up — presented again within 10 s it gives the same successor, later it revokes its whole family (RFC 9700 §4.14.2). `urn:ietf:params:oauth:grant-type:token-exchange` (with `sso.enabled`, RFC 8693): an ID token of the tenant's own identity provider for a gateway token of that tenant, the user created or joined at first sign-in; no client authentication (the subject token is the credential). `authorization_code` (with `sso.enabled`): the one-time code a browser sign-in (`/1/tenants/{tenant_id}/sso/login`) handed the application, single use, with the same `redirect_uri` and the `code_verifier` of the sign-in's S256 `code_challenge` (required: a missing or wrong one is `invalid_grant`, RFC 7636 §4.6); no client authentication. The token exchange takes a point of `limits.exchange` per client IP before the provider is asked (429 beyond). Never cached (`Cache-Control: no-store`, `Pragma: no-cache`).",
  tags: ['identity'],
  security: [...BASIC, ...ANONYMOUS],
  body: { schema: OAuthTokenForm, required: true, mediaType: FORM },
  answers: {
    200: answer(
      'An access token for the client, in its tenant, with the scopes granted; or, for a refresh, a new access token for the user and the successor refresh token; for a browser sign-in code, the user token (with a refresh token when `tokens.refresh.enabled`).',
      OAuthTokenAnswer,
    ),
  },
  refusals: {
    400: refusal(
      "A body not form-encoded, a parameter missing or repeated, two authentication methods; a scope the client does not hold or the login did not grant; a refresh token malformed, unknown, expired, of an ended session, or used (then its family is revoked); a browser sign-in code unknown, used, expired, for another `redirect_uri` or without its `code_verifier`; a subject token not accepted for the tenant (one answer whatever the check: its issuer not the tenant's provider, signature, audience, expiry, e-mail, domain, a user who may not be linked); an unsupported grant type.",
      'invalid_request',
      'invalid_scope',
      'invalid_grant',
      'unsupported_grant_type',
    ),
    401: refusal(
      'Unknown client, wrong secret or expired client (one answer for all), with `WWW-Authenticate: Basic realm="tenant-gateway"`.',
      'invalid_client',
    ),
    429: THROTTLED,
    503: refusal(
      "The store is unreachable, or (token exchange) the tenant's identity provider's discovery document or keys could not be fetched, fetched within `sso.failureCacheSeconds` of a failure, or are refused (a non-public address without `sso.allowPrivateIssuers`, an authorization endpoint off the issuer's origin).",
      'unavailable',
    ),
  },
};

export const oauthRevoke: Operation = {
  method: 'post',
  path: '/1/oauth/revoke',
  operationId: 'revokeOAuthToken',
  summary:
    'End a token (RFC 7009): a refresh token its family, an access token itself and its family',
  description:
    'The token is the credential: no client authentication. A refresh token of a family (current, or just rotated) ends the family and every access token issued in it; an access token that is alive is revoked, with its refresh family. Anything else — unknown, expired, made up — changes nothing and gets the same 200 (RFC 7009 §2.2). Confirmed on every instance (lease mode) before the answer.',
  tags: ['identity'],
  security: ANONYMOUS,
  body: { schema: RevocationForm, required: true, mediaType: FORM },
  answers: { 200: { description: 'Revoked, or nothing to revoke (one answer for both).' } },
  refusals: { 400: BAD_INPUT, 503: STORE_DOWN },
};
