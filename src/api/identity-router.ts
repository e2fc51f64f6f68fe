/**
 * The identity endpoints (docs/identity-api.md): tenant list, token (and its OAuth
 * alias), the OAuth token endpoint (its grants: `identity/grants.ts`) and revocation (RFC 7009), tenant record, signup, password change, logout. `current` stands for
 * the caller's own user or tenant id in any path.
 *
 * Each endpoint group is a file in `identity/`; who the caller is (Basic login,
 * bearer, audit actor) is `identity/callers.ts`. The routes are added here in
 * the order that sets each path's `Allow` header. The tenant admins' machine
 * clients are `identity/client-routes.ts`, their identity provider
 * `identity/idp-routes.ts` and its e-mail domains `identity/domain-routes.ts`;
 * a user's own sessions `identity/session-routes.ts`, their passkeys
 * `identity/passkey-routes.ts`; a tenant's members `identity/member-routes.ts`
 * and its invitations `identity/invitation-routes.ts`.
 */
import { Router } from '@koa/router';
import type { ApiState } from './state.js';
import type { IdentityRouterDeps } from './identity/deps.js';
import { addBackchannelLogoutRoute } from './identity/backchannel-logout-route.js';
import { addCompanySignInRoute } from './identity/company-sign-in-route.js';
import { addClientRoutes } from './identity/client-routes.js';
import { addDomainRoutes } from './identity/domain-routes.js';
import { addIdpRoutes } from './identity/idp-routes.js';
import { addInvitationRoutes } from './identity/invitation-routes.js';
import { addInvitationPageRoutes } from './invitation-page/invitation-page-routes.js';
import { addMemberRoutes } from './identity/member-routes.js';
import { addLogoutRoute } from './identity/logout-route.js';
import { addOAuthRevokeRoute } from './identity/oauth-revoke-route.js';
import { addOAuthTokenRoute } from './identity/oauth-token-route.js';
import type { ServedGrants } from './identity/grants.js';
import { addPasskeyRoutes } from './identity/passkey-routes.js';
import { addPasswordRoute } from './identity/password-route.js';
import { addEmailVerificationRoutes } from './identity/email-verification-routes.js';
import { addPasswordResetRoutes } from './identity/password-reset-routes.js';
import { addSessionRoutes } from './identity/session-routes.js';
import { addAuditRoute } from './identity/audit-route.js';
import { addCurrentUserRoutes } from './identity/current-user-route.js';
import { addSignupRoute } from './identity/signup-route.js';
import { addSsoRoutes } from './identity/sso-routes.js';
import { addSignInRoutes, addStylesheetRoute } from './sign-in/sign-in-routes.js';
import { addSignOutRoute } from './sign-in/sign-out-route.js';
import { addTenantRoute, addUserTenantsRoute } from './identity/tenant-routes.js';
import { addTokenRoutes } from './identity/token-routes.js';
import { addTotpRoutes } from './identity/totp-routes.js';

export type { IdentityRouterDeps } from './identity/deps.js';

/** @param grants what `POST /1/oauth/token` serves (`servedGrants`): the list the metadata publishes too */
export function createIdentityRouter(
  deps: IdentityRouterDeps,
  grants: ServedGrants,
): Router<ApiState> {
  const router = new Router<ApiState>({ prefix: '/1' });
  addCurrentUserRoutes(router, deps);
  addUserTenantsRoute(router, deps);
  addTokenRoutes(router, deps);
  addOAuthTokenRoute(router, grants, deps.bodyLimit);
  addOAuthRevokeRoute(router, deps);
  addLogoutRoute(router, deps);
  addTenantRoute(router, deps);
  addSignupRoute(router, deps);
  addPasswordRoute(router, deps);
  addEmailVerificationRoutes(router, deps);
  addPasswordResetRoutes(router, deps);
  addTotpRoutes(router, deps);
  addSessionRoutes(router, deps);
  addPasskeyRoutes(router, deps);
  addClientRoutes(router, deps);
  addIdpRoutes(router, deps);
  addDomainRoutes(router, deps);
  addAuditRoute(router, deps);
  addMemberRoutes(router, deps);
  addInvitationRoutes(router, deps);
  addInvitationPageRoutes(router, deps);
  addSsoRoutes(router, deps);
  addSignInRoutes(router, deps);
  addStylesheetRoute(router, deps);
  addSignOutRoute(router, deps);
  addCompanySignInRoute(router, deps);
  addBackchannelLogoutRoute(router, deps);
  return router;
}
