/**
 * Serving one of the sign-in pages' static files (the stylesheet, the passkey
 * script): its name carries its digest, so it is cached a year and its ETag
 * is the digest; `nosniff`, its own content type.
 */
import type { Router } from '@koa/router';
import type { ApiState } from '../state.js';

export interface StaticAsset {
  /** Under `/1` (the router's prefix). */
  route: string;
  bytes: Buffer;
  etag: string;
  type: string;
}

export function addStaticAsset(router: Router<ApiState>, asset: StaticAsset): void {
  router.get(asset.route, (ctx) => {
    ctx.set('cache-control', 'public, max-age=31536000, immutable');
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('etag', asset.etag);
    if (ctx.get('if-none-match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.bytes;
  });
}
