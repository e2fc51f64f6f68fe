/**
 * The console (`console.enabled`, issue 46) on the main listener:
 *
 * - `GET /console/assets/<name>`: the built script and stylesheet, named by
 *   their digest, cached for a year (public code: no session needed).
 * - `GET /console`, `/console/…`: the shell page for any deep link, for a
 *   signed-in user only — without a live session (none, ended, timed out,
 *   forged) a 302 to the sign-in page, back here after it. Two session
 *   cookies (tossing) are refused, never followed by a sign-in loop.
 *
 * The pages call the identity API with the session cookie; nothing here
 * reads or changes anything else.
 */
import { Router } from '@koa/router';
import { GatewayError, isGatewayError } from '../../errors.js';
import { cookieValues } from '../../text/cookies.js';
import { addStaticAsset } from '../sign-in/static-asset.js';
import type { IdentityRouterDeps } from '../identity/deps.js';
import type { ApiContext, ApiState } from '../state.js';
import type { ConsoleAssets } from './console-assets.js';
import { CONSOLE_HEADERS, consoleShell } from './console-shell.js';

export function createConsoleRouter(
  deps: IdentityRouterDeps,
  assets: ConsoleAssets,
): Router<ApiState> {
  const router = new Router<ApiState>();
  const shell = consoleShell(assets);
  for (const [name, asset] of assets.files)
    addStaticAsset(router, {
      route: `/console/assets/${name}`,
      bytes: asset.body,
      etag: asset.etag,
      type: asset.contentType,
    });
  router.get('/console/assets/:name', () => {
    throw new GatewayError('not_found', 'No such console asset.');
  });
  const page = async (ctx: ApiContext) => {
    if (!(await signedIn(deps, ctx))) return;
    ctx.status = 200;
    ctx.set(CONSOLE_HEADERS);
    ctx.body = shell;
  };
  router.get('/console', page);
  router.get('/console/*rest', page);
  return router;
}

/** Whether a live session came with the request; else it has been sent to sign in. */
async function signedIn(deps: IdentityRouterDeps, ctx: ApiContext): Promise<boolean> {
  const sessions = deps.browserSessions;
  const values =
    deps.sessionCookieName === undefined
      ? []
      : cookieValues(ctx.req.headers.cookie, deps.sessionCookieName);
  if (values.length > 1)
    throw new GatewayError('invalid_token', 'The session cookie was sent more than once.');
  if (sessions !== undefined && values.length === 1) {
    try {
      await sessions.principal(values[0] as string);
      return true;
    } catch (err) {
      if (!isGatewayError(err) || err.code !== 'invalid_token') throw err;
    }
  }
  const back = ctx.url.startsWith('/console') ? ctx.url : '/console/';
  // A deep link into a tenant signs in to that tenant (no choice page).
  const tenant = deepLinkTenant(ctx.path);
  const tenantQuery = tenant === undefined ? '' : `&tenant_id=${encodeURIComponent(tenant)}`;
  ctx.status = 302;
  ctx.set('cache-control', 'no-store');
  ctx.redirect(`/1/sign-in?return_to=${encodeURIComponent(back)}${tenantQuery}`);
  return false;
}

/** The tenant a deep link names (`/console/tenants/{t}/…`); undefined for none, or one no UTF-8 spells. */
function deepLinkTenant(path: string): string | undefined {
  const tenant = /^\/console\/tenants\/([^/?#]+)\//.exec(path)?.[1];
  if (tenant === undefined) return undefined;
  try {
    return decodeURIComponent(tenant);
  } catch {
    // `%E0`: no tenant id; the sign-in page asks which tenant.
    return undefined;
  }
}
