/**
 * What the tenant admins' operations share (machine clients, identity
 * provider, e-mail domains): a bearer of an admin of the path's tenant, and
 * the refusals every one of them gives.
 */
import { BEARER, NO_STORE, refusal, type Operation, type Refusal } from './operation.js';
import { BEARER_REFUSED, BUG, STORE_DOWN } from './refusals.js';

export { NO_STORE };

const NOT_ADMIN =
  "The path names a tenant other than the token's (`tenant_mismatch`); or the caller is not, now, an admin of the tenant, is not a user, or the tenant is a personal one (`forbidden`)";

export const TENANT_GONE = 'The tenant was removed after the token was issued.';

export interface AdminOperation extends Omit<Operation, 'security' | 'refusals'> {
  /** What a 404 means here. */
  notFound: string;
  /** More of what a 403 means here, after the sentence every one says. */
  forbiddenToo?: string;
  /** The operation's own refusals; they win over the shared ones. */
  refusals?: Readonly<Record<number, Refusal>>;
}

export function adminOperation({
  notFound,
  forbiddenToo,
  refusals,
  ...op
}: AdminOperation): Operation {
  return {
    ...op,
    security: BEARER,
    refusals: {
      401: BEARER_REFUSED,
      403: refusal(
        forbiddenToo === undefined ? `${NOT_ADMIN}.` : `${NOT_ADMIN}; ${forbiddenToo}`,
        'tenant_mismatch',
        'forbidden',
      ),
      404: refusal(notFound, 'not_found'),
      500: BUG,
      503: STORE_DOWN,
      ...refusals,
    },
  };
}
