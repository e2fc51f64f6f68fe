/** `/.well-known/openapi.json`: the OpenAPI 3.1 description of the gateway's own endpoints. */
import { Router } from '@koa/router';
import { openApiDocument } from './openapi.js';
import type { ApiState } from './state.js';

export function createOpenApiRouter(): Router<ApiState> {
  const router = new Router<ApiState>();
  // Built once: it depends on nothing but the version.
  const body = JSON.stringify(openApiDocument());
  router.get('/.well-known/openapi.json', (ctx) => {
    ctx.set('cache-control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return router;
}
