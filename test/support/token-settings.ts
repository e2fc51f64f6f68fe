/**
 * The access-token settings the unit suites of `src/auth/tokens` and
 * `src/auth/refresh` sign and verify with: the gateway's defaults but a
 * ten-minute lifetime.
 */
import type { TokenSettings } from '../../src/auth/tokens/tokens.js';

export const TOKEN_SETTINGS: TokenSettings = {
  issuer: 'tenant-gateway',
  audience: 'tenant-api',
  ttlSeconds: 600,
  algorithms: ['EdDSA', 'ES256'],
  clockSkewSeconds: 30,
};
