/** The Koa application serving the gateway's own endpoints (`/1/...`, `/.well-known/...`). */
import type { IncomingMessage } from 'node:http';
import Koa from 'koa';
import { createIdentityRouter, type IdentityRouterDeps } from './identity-router.js';
import type { GrantsConfig } from './identity/grant.js';
import { servedGrants } from './identity/grants.js';
import {
  createOAuthMetadataRouter,
  type OAuthMetadataDeps,
} from './identity/oauth-metadata-route.js';
import { createJwksRouter } from './jwks-router.js';
import type { ConsoleAssets } from './console/console-assets.js';
import { createConsoleRouter } from './console/console-routes.js';
import { createOpenApiRouter } from './openapi-router.js';
import { renderErrors } from './render-errors.js';
import type { ApiState } from './state.js';
import type { KeyRing } from '../auth/tokens/tokens.js';
import type { RequestScope } from '../http/scope.js';

export interface ApiDeps extends IdentityRouterDeps {
  keyring: KeyRing;
  /** What decides the grants served (`tokens.refresh.enabled`, `sso.enabled`). */
  grantsConfig: GrantsConfig;
  /** RFC 8414 metadata: the issuer and the public origin. */
  oauthMetadata: OAuthMetadataDeps;
  /** The scope the gateway's dispatcher opened for this request. */
  scopeOf: (req: IncomingMessage) => RequestScope;
  /** The console's built assets (`console.enabled`); absent: no `/console/` here. */
  consoleAssets?: ConsoleAssets | undefined;
}

export function createApiApp(deps: ApiDeps): Koa<ApiState> {
  const app = new Koa<ApiState>();
  // Koa's default handler prints errors to stderr; ours are rendered and logged in renderErrors.
  app.silent = true;
  // One registry of grants: the token endpoint serves its enabled ones, the metadata publishes them.
  const grants = servedGrants(deps.grantsConfig, deps);
  const identity = createIdentityRouter(deps, grants);
  const jwks = createJwksRouter(deps.keyring);
  const openApi = createOpenApiRouter();
  const oauthMetadata = createOAuthMetadataRouter(deps.oauthMetadata, [...grants.keys()]);
  app.use((ctx, next) => {
    ctx.state.scope = deps.scopeOf(ctx.req);
    return next();
  });
  app.use(renderErrors());
  app.use(identity.routes());
  app.use(identity.allowedMethods());
  app.use(jwks.routes());
  app.use(jwks.allowedMethods());
  app.use(oauthMetadata.routes());
  app.use(oauthMetadata.allowedMethods());
  app.use(openApi.routes());
  app.use(openApi.allowedMethods());
  if (deps.consoleAssets !== undefined) {
    const console = createConsoleRouter(deps, deps.consoleAssets);
    app.use(console.routes());
    app.use(console.allowedMethods());
  }
  return app;
}
