/** The Redis store's tenant identity providers (see `idp-types.ts`; layout in `redis-keys.ts`). */
import { GatewayError } from '../errors.js';
import type { TenantIdps } from './idp-types.js';
import type { RedisStoreContext } from './redis-context.js';

export function redisIdps(_context: RedisStoreContext): TenantIdps {
  const notYet = async (): Promise<never> => {
    throw new GatewayError('not_implemented', 'Not yet.');
  };
  return {
    setTenantIdp: notYet,
    getTenantIdp: notYet,
    removeTenantIdp: notYet,
    tenantIdByIssuer: notYet,
  };
}
