/**
 * The OpenAPI operations of the browser sign-in through a tenant's identity
 * provider (`sso.enabled`, issue 34; `identity/sso-routes.ts`). Both answer a
 * browser: a 302, or an error body (never a redirect to an unregistered URI).
 */
import { refusal, THROTTLED, type Json } from './answers.js';

const query = (name: string, description: string, required = false): Json => ({
  name,
  in: 'query',
  required,
  schema: { type: 'string' },
  description,
});

const redirect = (description: string): Json => ({
  description,
  headers: { Location: { schema: { type: 'string', format: 'uri' } } },
});

/** `/1/tenants/{tenant_id}/sso/login` */
export function ssoLoginPath(): Json {
  return {
    get: {
      operationId: 'ssoLogin',
      summary: "Start a browser sign-in through the tenant's identity provider",
      description:
        "At most `limits.ssoLogin.perIp` per client IP per window, and one point of `limits.exchange` (429 beyond either). PKCE S256 is required of the application. Redirects the browser to the tenant's provider (authorization code flow with PKCE S256, `state` and `nonce`; the gateway's callback `/1/sso/callback` on the origin the request was addressed to). The pending sign-in is kept in the store for 10 minutes, single use. With `sso.enabled` only.",
      tags: ['identity'],
      security: [{}],
      parameters: [
        {
          name: 'tenant_id',
          in: 'path',
          required: true,
          schema: { type: 'string' },
        },
        query(
          'redirect_uri',
          'Where the application gets its code: exactly one of `sso.redirectUris`.',
          true,
        ),
        query('state', "The application's own state, handed back with the code."),
        query(
          'code_challenge',
          "The application's PKCE challenge (RFC 7636, S256, 43 characters): the code is redeemed only with its verifier.",
          true,
        ),
        query('code_challenge_method', '`S256` (the only one accepted).', true),
      ],
      responses: {
        '302': redirect("To the tenant's identity provider."),
        '400': refusal(
          'A `redirect_uri` that is not registered, a parameter missing or repeated, no challenge or one not S256, a tenant without an identity provider: never a redirect.',
          'invalid_request',
        ),
        '429': THROTTLED,
        '503': refusal(
          "The store, or the provider's discovery document, could not be reached (or within `sso.failureCacheSeconds` of a failure), or the document is refused: its `authorization_endpoint` is not on the issuer's origin, or an address is not public (without `sso.allowPrivateIssuers`). Never a redirect then.",
          'unavailable',
        ),
      },
    },
  };
}

/** `/1/sso/callback` */
export function ssoCallbackPath(): Json {
  return {
    get: {
      operationId: 'ssoCallback',
      summary: "The identity provider's answer to a browser sign-in",
      description:
        "Takes the pending sign-in by `state` (single use), redeems the provider's code at its token endpoint (`client_secret_basic`, the PKCE verifier), verifies the ID token as the token exchange does plus its `nonce`, creates or joins the user as the exchange does, then redirects to the application's `redirect_uri` with a one-time `code` (60 seconds, redeemed at `POST /1/oauth/token` with `grant_type=authorization_code`) and the application's `state`. A provider's `error` goes back to the application as `error`. One point of `limits.exchange` per client IP (429 beyond), before the state is spent.",
      tags: ['identity'],
      security: [{}],
      parameters: [
        query('state', 'The state the gateway sent the provider.', true),
        query('code', "The provider's authorization code."),
        query('error', "The provider's error."),
      ],
      responses: {
        '302': redirect(
          "To the application's `redirect_uri` with `code` (or `error`) and `state`.",
        ),
        '400': refusal(
          "An unknown, used or expired `state` (never a redirect); the provider's code or ID token not accepted (one answer whatever the check).",
          'invalid_request',
          'invalid_grant',
        ),
        '429': THROTTLED,
        '503': refusal(
          "The store or the tenant's identity provider could not be reached.",
          'unavailable',
        ),
      },
    },
  };
}
