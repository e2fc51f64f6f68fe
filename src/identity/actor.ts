/**
 * Who performs an identity operation. The operator (the CLI) and a tenant's
 * admin (the identity API, next the console) go through the same operation;
 * where the operator legitimately may do more (give any scope
 * `authorization.clientScopes` allows, rotate any client, vouch for a domain
 * without DNS, create an address of a domain a tenant manages), the
 * operation reads it from here — never a second code path.
 */
import type { AuditActor } from '../audit/events.js';
import { GatewayError } from '../errors.js';
import type { MemberRole } from '../store/types.js';

export type Actor =
  /** The operator (the CLI): no role, bounded by the config alone. */
  | { kind: 'operator'; audit: AuditActor }
  /**
   * A member of the tenant acted on, with `role` there now (read from the
   * store by the caller): bounded by that role too.
   */
  | { kind: 'member'; role: MemberRole; audit: AuditActor }
  /** A user acting on their own account: signing up, changing their password. */
  | { kind: 'self'; audit: AuditActor };

export type OperatorActor = Extract<Actor, { kind: 'operator' }>;
/** A tenant's member acting on it (its admin, for what the API manages). */
export type MemberActor = Extract<Actor, { kind: 'member' }>;

/**
 * @throws GatewayError `forbidden` unless `actor` is the operator
 * @param what what only the operator may do, for the refusal: "vouch for a domain without DNS"
 */
export function requireOperator(actor: Actor, what: string): void {
  if (actor.kind !== 'operator')
    throw new GatewayError('forbidden', `Only the operator may ${what}.`);
}
