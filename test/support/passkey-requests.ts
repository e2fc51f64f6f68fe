/**
 * Passkeys over HTTP as a browser's page script sends them (issue 45): the
 * registration calls of a signed-in page (`/1/users/current/passkeys…`, the
 * session cookie, `Sec-Fetch-Site: same-origin`) and the sign-in page's
 * passkey options and post, answered by the software authenticator
 * (`soft-authenticator.ts`). Shared by the passkey suites and the OpenAPI one.
 */
import { cookiePair, openSignIn, postForm, SESSIONS, signIn } from './sign-in-page.js';
import {
  assertPasskey,
  createPasskey,
  type CreationOptions,
  type SoftPasskey,
  type Tamper,
} from './soft-authenticator.js';

/** The origin the passkey suites' gateways claim (`publicUrl`): the rpId is its host. */
export const PASSKEY_ORIGIN = 'http://gw.test';

/** Config overrides: sessions, `publicUrl` and passkeys on. */
export const PASSKEY_CONFIG = {
  sessions: SESSIONS,
  publicUrl: PASSKEY_ORIGIN,
  mfa: { passkeys: { enabled: true } },
};

/** The session cookie (`tg_session=…`) of `who` signed in on the page to `tenantId`. */
export async function sessionOf(
  base: string,
  who: { email: string; password: string },
  tenantId: string,
): Promise<string> {
  const { res } = await signIn(base, { ...who, tenant_id: tenantId });
  if (res.status !== 303) throw new Error(`sign-in: ${res.status}`);
  return cookiePair(res, 'tg_session');
}

/** A passkey request as the signed-in page's script makes it (same origin unless `headers` say otherwise). */
export function passkeyRequest(
  base: string,
  method: string,
  path: string,
  cookie: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/1/users/current/passkeys${path}`, {
    method,
    headers: {
      'sec-fetch-site': 'same-origin',
      ...(cookie === undefined ? {} : { cookie }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Creation options, then the soft authenticator's answer posted: the passkey and the answer. */
export async function registerSoftPasskey(
  base: string,
  cookie: string,
  tamper: Tamper = {},
): Promise<{ passkey: SoftPasskey; res: Response }> {
  const options = await passkeyRequest(base, 'POST', '/options', cookie);
  if (options.status !== 200) throw new Error(`options: ${options.status}`);
  const created = (await options.json()) as CreationOptions;
  const { passkey, response } = createPasskey(created, PASSKEY_ORIGIN, tamper);
  const res = await passkeyRequest(base, 'POST', '', cookie, { response, name: 'Laptop' });
  return { passkey, res };
}

/** The sign-in page opened (`query`), its passkey options asked for: the page's cookie, token and challenge. */
export async function passkeyChallenge(
  base: string,
  query = '?return_to=%2Fapp',
): Promise<{ preSession: string; token: string; challenge: string; returnTo: string }> {
  const page = await openSignIn(base, query);
  const res = await postForm(
    base,
    '/1/sign-in/passkey/options',
    { csrf_token: page.token },
    {
      cookie: page.preSession,
      headers: { accept: 'application/json' },
    },
  );
  if (res.status !== 200) throw new Error(`passkey options: ${res.status}`);
  const { challenge } = (await res.json()) as { challenge: string };
  const returnTo = /name="return_to" value="([^"]*)"/.exec(page.html)?.[1] ?? '/';
  return { preSession: page.preSession, token: page.token, challenge, returnTo };
}

/** Posts an assertion of `passkey` for `ceremony`'s challenge (or `tamper`'s) as the sign-in form. */
export function postPasskeySignIn(
  base: string,
  ceremony: { preSession: string; token: string; challenge: string; returnTo: string },
  credential: Record<string, unknown>,
  fields: Record<string, string> = {},
): Promise<Response> {
  return postForm(
    base,
    '/1/sign-in',
    {
      csrf_token: ceremony.token,
      return_to: ceremony.returnTo,
      step: 'passkey',
      credential: JSON.stringify(credential),
      ...fields,
    },
    { cookie: ceremony.preSession },
  );
}

/** A whole passkey sign-in: the page, its challenge, the assertion posted. */
export async function signInWithSoftPasskey(
  base: string,
  passkey: SoftPasskey,
  fields: Record<string, string> = {},
): Promise<Response> {
  const ceremony = await passkeyChallenge(base);
  const credential = assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN);
  return postPasskeySignIn(base, ceremony, credential, fields);
}
