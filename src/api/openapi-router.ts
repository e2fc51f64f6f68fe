/** `/.well-known/openapi.json`: the OpenAPI 3.1 description of the gateway's own endpoints. */
import { Router } from '@koa/router';
import { openApiDocument } from './openapi.js';
import type { ApiState } from './state.js';

/**
 * Rendered at its first request, once per process: it depends on nothing but
 * the version, and rendering it (~30 ms of CPU) at every gateway's start was
 * paid by starts that never serve it.
 */
let rendered: string | undefined;

export function createOpenApiRouter(): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/.well-known/openapi.json', (ctx) => {
    ctx.set('cache-control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = rendered ??= JSON.stringify(openApiDocument());
  });
  return router;
}
