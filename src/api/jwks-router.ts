/** `/.well-known/jwks.json`: the public keys that verify our tokens (RFC 7517). */
import { Router } from '@koa/router';
import type { KeyRing } from '../auth/tokens/tokens.js';
import type { ApiState } from './state.js';

export function createJwksRouter(keyring: KeyRing): Router<ApiState> {
  const router = new Router<ApiState>();
  router.get('/.well-known/jwks.json', (ctx) => {
    // Short cache: verifiers pick up a rotated key within minutes.
    ctx.set('cache-control', 'public, max-age=300');
    ctx.type = 'application/jwk-set+json';
    ctx.body = JSON.stringify(keyring.current.jwks);
  });
  return router;
}
