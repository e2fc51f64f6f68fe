/**
 * The operations of the browser sign-in through a tenant's identity provider
 * (`sso.enabled`, issue 34; `identity/sso-routes.ts`, which reads these
 * queries itself). Both answer a browser: a 302, or an error body (never a
 * redirect to an unregistered URI).
 */
import { z } from 'zod';
import { ANONYMOUS, refusal, type Answer, type Operation } from './operation.js';
import { THROTTLED } from './refusals.js';

const redirect = (description: string): Answer => ({
  description,
  headers: { Location: { schema: { type: 'string', format: 'uri' } } },
});
const described = (description: string) => z.string().meta({ description });

export const ssoLogin: Operation = {
  method: 'get',
  path: '/1/tenants/{tenant_id}/sso/login',
  operationId: 'ssoLogin',
  summary: "Start a browser sign-in through the tenant's identity provider",
  description:
    "At most `limits.ssoLogin.perIp` per client IP per window, and one point of `limits.exchange` (429 beyond either). PKCE S256 is required of the application. Redirects the browser to the tenant's provider (authorization code flow with PKCE S256, `state` and `nonce`; the gateway's callback `/1/sso/callback` on the origin the request was addressed to). The pending sign-in is kept in the store for 10 minutes, single use. With `sso.enabled` only.",
  tags: ['identity'],
  security: ANONYMOUS,
  params: z.object({ tenant_id: z.string() }),
  query: z.object({
    redirect_uri: described(
      'Where the application gets its code: exactly one of `sso.redirectUris`.',
    ),
    state: described("The application's own state, handed back with the code.").optional(),
    code_challenge: described(
      "The application's PKCE challenge (RFC 7636, S256, 43 characters): the code is redeemed only with its verifier.",
    ),
    code_challenge_method: described('`S256` (the only one accepted).'),
  }),
  answers: { 302: redirect("To the tenant's identity provider.") },
  refusals: {
    400: refusal(
      'A `redirect_uri` that is not registered, a parameter missing or repeated, no challenge or one not S256, a tenant without an identity provider: never a redirect.',
      'invalid_request',
    ),
    429: THROTTLED,
    503: refusal(
      "The store, or the provider's discovery document, could not be reached (or within `sso.failureCacheSeconds` of a failure), or the document is refused: its `authorization_endpoint` is not on the issuer's origin, or an address is not public (without `sso.allowPrivateIssuers`). Never a redirect then.",
      'unavailable',
    ),
  },
};

export const ssoCallback: Operation = {
  method: 'get',
  path: '/1/sso/callback',
  operationId: 'ssoCallback',
  summary: "The identity provider's answer to a browser sign-in",
  description:
    "Takes the pending sign-in by `state` (single use), redeems the provider's code at its token endpoint (`client_secret_basic`, the PKCE verifier), verifies the ID token as the token exchange does plus its `nonce`, creates or joins the user as the exchange does, then redirects to the application's `redirect_uri` with a one-time `code` (60 seconds, redeemed at `POST /1/oauth/token` with `grant_type=authorization_code`) and the application's `state`. A provider's `error` goes back to the application as `error`. A sign-in begun at `/1/sign-in/sso` ends instead in a browser session: 303 to its `return_to` with the session cookie (a provider's `error`: 303 to the sign-in page). One point of `limits.exchange` per client IP (429 beyond), before the state is spent.",
  tags: ['identity'],
  security: ANONYMOUS,
  query: z.object({
    state: described('The state the gateway sent the provider.'),
    code: described("The provider's authorization code.").optional(),
    error: described("The provider's error.").optional(),
  }),
  answers: {
    302: redirect("To the application's `redirect_uri` with `code` (or `error`) and `state`."),
    303: {
      description:
        "A sign-in begun at `/1/sign-in/sso`: to its `return_to` with the session cookie (`Set-Cookie`), or, for a provider's `error`, to `/1/sign-in?return_to=…&error=company_sign_in_cancelled` (`access_denied`) or `company_sign_in_failed`.",
      headers: { Location: { schema: { type: 'string' } } },
    },
  },
  refusals: {
    400: refusal(
      "An unknown, used or expired `state` (never a redirect); the provider's code or ID token not accepted (one answer whatever the check).",
      'invalid_request',
      'invalid_grant',
    ),
    429: THROTTLED,
    503: refusal(
      "The store or the tenant's identity provider could not be reached.",
      'unavailable',
    ),
  },
};
