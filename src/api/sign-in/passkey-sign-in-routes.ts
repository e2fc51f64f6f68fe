/**
 * The sign-in page's passkey routes (issue 45; `mfa.passkeys.enabled`):
 *
 * - `GET /1/sign-in/passkey.<digest>.js`: the page's one script (`passkey-script.ts`);
 * - `POST /1/sign-in/passkey/options`: the request options, under the
 *   login-CSRF rule of the sign-in post (pre-session cookie, its form token,
 *   the same origin), the challenge bound to that cookie.
 *
 * The assertion itself is posted as the sign-in form (`step=passkey`:
 * `passkey-step.ts`).
 */
import type { Router } from '@koa/router';
import { signInOptions } from '../../identity/passkey-sign-in.js';
import type { ApiState } from '../state.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import { noStore } from '../identity/callers.js';
import { param, readForm } from '../identity/oauth-form.js';
import { checkSignInPost } from './form-token.js';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_ETAG, PASSKEY_SCRIPT_ROUTE } from './passkey-script.js';
import { requestOrigin } from './request-origin.js';
import { addStaticAsset } from './static-asset.js';

export function addPasskeySignInRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const { passkeys, signIn } = deps;
  if (passkeys === undefined || signIn === undefined) return;
  addStaticAsset(router, {
    route: PASSKEY_SCRIPT_ROUTE,
    bytes: PASSKEY_SCRIPT,
    etag: PASSKEY_SCRIPT_ETAG,
    type: 'text/javascript; charset=utf-8',
  });
  router.post('/sign-in/passkey/options', async (ctx) => {
    const form = await readForm(ctx, deps.bodyLimit);
    const own = requestOrigin(deps.publicOrigin, ctx.req);
    const token = param(form, 'csrf_token');
    const preSession = checkSignInPost(ctx.req.headers, own, token, signIn.config);
    noStore(ctx);
    ctx.body = await signInOptions(passkeys, preSession);
  });
}
