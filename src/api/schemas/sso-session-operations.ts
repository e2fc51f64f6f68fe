/**
 * The operations of the company sign-in into a browser session and of the
 * IdP's back-channel logout (`sso.enabled` and `sessions.enabled`, issue 44;
 * `identity/company-sign-in-route.ts` and `identity/backchannel-logout-route.ts`,
 * which read these inputs themselves). The callback is `ssoCallback`
 * (`sso-operations.ts`).
 */
import { z } from 'zod';
import { ANONYMOUS, NO_STORE, refusal, type Answer, type Operation } from './operation.js';
import { requestShapes } from './registry.js';
import { STORE_DOWN, THROTTLED } from './refusals.js';

const FORM = 'application/x-www-form-urlencoded';

const redirect = (description: string): Answer => ({
  description,
  headers: { Location: { schema: { type: 'string' } } },
});
const described = (description: string) => z.string().meta({ description });

export const companySignIn: Operation = {
  method: 'get',
  path: '/1/sign-in/sso',
  operationId: 'companySignIn',
  summary: "Sign in with the company's identity provider into a browser session",
  description:
    'The sign-in page\'s "sign in with your company" form. The tenant that has verified the e-mail\'s domain and whose identity provider lists it (or `tenant_id`, when it has one) is asked, through the browser sign-in in session mode: its callback `/1/sso/callback` ends in a browser session for that tenant, 303 to `return_to` with the session cookie. `return_to` is a path on the gateway (one leading `/`, not `//` or `/\\`, no backslash, space or control character), else `/`. At most `limits.ssoLogin.perIp` per client IP per window, and one point of `limits.exchange` (429 beyond either). With `sso.enabled` and `sessions.enabled` only.',
  tags: ['identity'],
  security: ANONYMOUS,
  query: z.object({
    email: described("The person's e-mail address: its domain picks the tenant.").optional(),
    tenant_id: described(
      'Instead of `email`: the tenant whose identity provider to use.',
    ).optional(),
    return_to: described('The path to land on once signed in (default `/`).').optional(),
  }),
  answers: {
    302: redirect(
      "To the tenant's identity provider (the sign-in bound to this browser by a cookie).",
    ),
    303: redirect(
      'No tenant signs this address in (a domain nobody has verified, or one its identity provider does not list): back to `/1/sign-in?return_to=…&error=no_company_sign_in`; no provider is asked.',
    ),
  },
  refusals: {
    400: refusal('A parameter repeated.', 'invalid_request'),
    429: THROTTLED,
    503: refusal(
      "The store, or the provider's discovery document, could not be reached, or the document is refused. Never a redirect then.",
      'unavailable',
    ),
  },
};

export const BackchannelLogoutForm = z
  .object({
    logout_token: z.string().meta({
      description:
        "The identity provider's logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT signed by the issuer's keys.",
    }),
  })
  .register(requestShapes, { id: 'BackchannelLogoutRequest' });

export const backchannelLogout: Operation = {
  method: 'post',
  path: '/1/sso/backchannel-logout',
  operationId: 'backchannelLogout',
  summary: "A tenant's identity provider ends a person's sessions (OIDC Back-Channel Logout)",
  description:
    "Validates the logout token (§2.6): signed by the keys of an issuer a tenant's identity provider record names (never `none`), `aud` holding that record's client id, `iat` present and recent (at most 10 minutes, not ahead beyond the skew), `jti` never seen before, `events` with `http://schemas.openid.net/event/backchannel-logout`, a `sub` or a `sid`, no `nonce`. Then the browser sessions of the person the provider means that began at that issuer (of that `sid` when given) end on every instance before the answer. With `sso.enabled` and `sessions.enabled` only.",
  tags: ['identity'],
  security: ANONYMOUS,
  body: { schema: BackchannelLogoutForm, required: true, mediaType: FORM },
  answers: {
    200: {
      description: 'The sessions are ended (also when none of that person was known here).',
      headers: NO_STORE,
    },
  },
  refusals: {
    400: refusal(
      'The body is not form-encoded, `logout_token` missing or repeated, or the token does not validate or was seen before (§2.8); nothing ended.',
      'invalid_request',
    ),
    503: STORE_DOWN,
  },
};
