/**
 * The Redis store's refresh-token families: not written yet (issue 33, next
 * commit). Every method refuses until then.
 */
import { GatewayError } from '../errors.js';
import type { RefreshFamilyStore } from './refresh-types.js';

const notYet = async (): Promise<never> => {
  throw new GatewayError('internal_error', 'Refresh families are not yet kept in Redis.');
};

export function redisRefreshFamilies(): RefreshFamilyStore {
  return {
    createRefreshFamily: notYet,
    rotateRefreshToken: notYet,
    getRefreshFamily: notYet,
    revokeRefreshFamily: notYet,
    revokeRefreshFamiliesOf: notYet,
  };
}
