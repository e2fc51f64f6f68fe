/**
 * `POST /1/oauth/token`: the OAuth token endpoint. A form-encoded body; its
 * `grant_type` picks one of the grants this gateway serves (the registry's
 * enabled ones, `grants.ts`: the client-credentials grant,
 * `oauth-client-grant.ts`; with `tokens.refresh.enabled` the refresh-token
 * grant, `oauth-refresh-grant.ts`; with `sso.enabled` the token exchange,
 * `oauth-exchange-grant.ts`, and the browser sign-in's code,
 * `oauth-code-grant.ts`); any other is
 * `unsupported_grant_type`. Errors are the RFC 6749 §5.2 body the gateway
 * gives every refusal.
 */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import type { ApiState } from '../state.js';
import type { ServedGrants } from './grants.js';
import { invalidRequest, param, readForm } from './oauth-form.js';

export function addOAuthTokenRoute(
  router: Router<ApiState>,
  grants: ServedGrants,
  bodyLimit: number,
): void {
  const names = [...grants.keys()];
  const unsupported = new GatewayError(
    'unsupported_grant_type',
    names.length === 1
      ? `Only ${names[0] as string} is supported.`
      : `Only ${names.join(', ')} are supported.`,
  );
  router.post('/oauth/token', async (ctx) => {
    const form = await readForm(ctx, bodyLimit);
    const grantType = param(form, 'grant_type');
    if (grantType === undefined) throw invalidRequest('The grant_type parameter is required.');
    const grant = grants.get(grantType);
    if (grant === undefined) throw unsupported;
    return grant(ctx, form);
  });
}
