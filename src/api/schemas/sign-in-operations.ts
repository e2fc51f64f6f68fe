/**
 * The sign-in page and the sign-out (`sessions.enabled`, issue 44;
 * `api/sign-in/`): what a person's browser gets, HTML pages and redirects.
 * A refusal is the JSON error body, or, for a request that accepts
 * `text/html` before JSON (a browser's navigation), the page again showing
 * it, with the same status and headers.
 */
import { z } from 'zod';
import {
  ANONYMOUS,
  NO_STORE,
  REQUEST_ID,
  refusal,
  type Answer,
  type Json,
  type Operation,
} from './operation.js';
import { answerShapes, requestShapes } from './registry.js';
import { BAD_INPUT, STORE_DOWN, THROTTLED, TOO_LARGE } from './refusals.js';

export const FORM = 'application/x-www-form-urlencoded';
const HTML = 'text/html';
const described = (description: string) => z.string().meta({ description });

/** A page: the markup, no script. */
export const SignInPage = z.string().register(answerShapes, {
  id: 'SignInPage',
  description:
    "An HTML page without script (CSP `default-src 'none'; style-src 'self'; form-action 'self' https:; frame-ancestors 'none'`), never cached.",
});

const PAGE_HEADERS: Json = {
  ...REQUEST_ID,
  ...NO_STORE,
  'Content-Security-Policy': { schema: { type: 'string' } },
  'X-Frame-Options': { schema: { const: 'DENY' } },
};

export const page = (description: string): Answer => ({
  description,
  schema: SignInPage,
  mediaType: HTML,
  headers: PAGE_HEADERS,
});

const seeOther = (description: string): Answer => ({
  description,
  headers: {
    ...REQUEST_ID,
    Location: { schema: { type: 'string' } },
    'Set-Cookie': { schema: { type: 'string' } },
  },
});

const RETURN_TO =
  'Where the browser goes after: a path on this host (one leading `/`, no `//`, `/\\`, backslash, control character or space, also once percent-decoded; at most 2048 characters) or an `https:` URL (`http:` too with `sessions.cookie.secure: false`) of a host in `sessions.returnHosts`. Anything else means `/`.';

export const SignInQuery = z.object({
  return_to: described(RETURN_TO).optional(),
  tenant_id: described(
    'The tenant to enter; omitted: the user’s only tenant, or a choice after the password.',
  ).optional(),
  error: described(
    'Set by the company sign-in when it sends the browser back: `no_company_sign_in`, `company_sign_in_cancelled` or `company_sign_in_failed`, shown in words; any other value is ignored.',
  ).optional(),
});

export const SignInForm = z
  .object({
    csrf_token: described("The page's form token, bound to its pre-session cookie."),
    email: described('Step 1 (password): the e-mail address.').optional(),
    password: described('Step 1 (password): the password.').optional(),
    return_to: described(RETURN_TO).optional(),
    tenant_id: described(
      'Step 1: the tenant named by the page; step 2 (`step=tenant`): the tenant chosen.',
    ).optional(),
    step: z
      .enum(['tenant'])
      .optional()
      .meta({ description: '`tenant`: the tenant choice (step 2); omitted: the password.' }),
  })
  .register(requestShapes, { id: 'SignInRequest' });

export const SignOutForm = z
  .object({ return_to: described(RETURN_TO).optional() })
  .register(requestShapes, { id: 'SignOutRequest' });

export const showSignIn: Operation = {
  method: 'get',
  path: '/1/sign-in',
  operationId: 'showSignIn',
  summary: 'The sign-in page',
  description:
    'E-mail and password (and, with `sso.enabled`, "sign in with your company": a form to `GET /1/sign-in/sso`). Sets the pre-session cookie (`__Host-tg_signin`, or `tg_signin` with `sessions.cookie.secure: false`; HttpOnly, SameSite=Lax, 10 minutes) the form\'s token is bound to. With `sessions.enabled` only.',
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  query: SignInQuery,
  answers: { 200: page('The sign-in page.') },
  refusals: { 400: BAD_INPUT },
};

export const postSignIn: Operation = {
  method: 'post',
  path: '/1/sign-in',
  operationId: 'signIn',
  summary: 'Sign in: password, then the tenant, then the session cookie',
  description:
    'Needs the pre-session cookie, its form token and the same origin (`Sec-Fetch-Site: same-origin`, else `Origin`). The password is checked as the Basic login checks it (the same limits, the same answer and work for an unknown e-mail). A user of several tenants, without `tenant_id`, gets a page to choose one (200), whose post (`step=tenant`) continues the sign-in within 5 minutes, once. A session cookie the browser had is ended first.',
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  body: { schema: SignInForm, required: true, mediaType: FORM },
  answers: {
    200: page('The tenant choice (the password proven; the user has several tenants).'),
    303: seeOther(
      'Signed in: to `return_to` with the session cookie (HttpOnly, SameSite=Lax, Path=/, Secure unless `sessions.cookie.secure: false`); the pre-session cookie cleared.',
    ),
  },
  refusals: {
    400: refusal(
      'A field missing or repeated, a body not a form, or a tenant choice after its 5 minutes or used.',
      'invalid_request',
    ),
    401: refusal(
      'E-mail or password wrong (one answer for both, and for a disabled account); the page keeps the e-mail, never the password.',
      'invalid_credentials',
    ),
    403: refusal(
      'Login CSRF: no pre-session cookie, a token not its own, or another origin; or a tenant that does not exist or the user is not a member of (one answer).',
      'csrf_refused',
      'tenant_access_denied',
    ),
    413: TOO_LARGE,
    429: THROTTLED,
    503: STORE_DOWN,
  },
};

export const signOut: Operation = {
  method: 'post',
  path: '/1/sign-out',
  operationId: 'signOut',
  summary: 'Sign out: the session ended on every instance, its cookie cleared',
  description:
    "A form posted from this origin (`Sec-Fetch-Site: same-origin`, else `Origin`). Without a live session the cookie is still cleared and the answer is the same. A session begun at a tenant's IdP that offers RP-initiated logout is sent there instead.",
  tags: ['identity'],
  pages: true,
  security: ANONYMOUS,
  body: { schema: SignOutForm, required: false, mediaType: FORM },
  answers: {
    303: seeOther(
      "To `return_to` (checked), or `/1/sign-in`, or the IdP's end-session endpoint; the session cookie cleared.",
    ),
  },
  refusals: {
    400: BAD_INPUT,
    403: refusal('Posted from another origin.', 'csrf_refused'),
    503: STORE_DOWN,
  },
};
