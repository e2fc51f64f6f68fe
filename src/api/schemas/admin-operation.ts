/**
 * What the tenant admins' operations share (machine clients, identity
 * provider, e-mail domains, members, invitations): a bearer token or the
 * browser session of an admin of the path's tenant, and the refusals every
 * one of them gives.
 */
import { NO_STORE, refusal, SESSION_OR_BEARER, type Operation, type Refusal } from './operation.js';
import { BUG, CALLER_REFUSED, STORE_DOWN } from './refusals.js';

export { NO_STORE };

const NOT_ADMIN =
  "The path names a tenant other than the token's or session's (`tenant_mismatch`); the caller is not, now, an admin of the tenant, is not a user, or the tenant is a personal one (`forbidden`); with the session cookie, an unsafe method not from the gateway's own origin (`csrf_refused`)";

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
    security: SESSION_OR_BEARER,
    refusals: {
      401: CALLER_REFUSED,
      403: refusal(
        forbiddenToo === undefined ? `${NOT_ADMIN}.` : `${NOT_ADMIN}; ${forbiddenToo}`,
        'tenant_mismatch',
        'forbidden',
        'csrf_refused',
      ),
      404: refusal(notFound, 'not_found'),
      500: BUG,
      503: STORE_DOWN,
      ...refusals,
    },
  };
}
