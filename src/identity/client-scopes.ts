/**
 * Which scopes a machine client may hold, by who gives them (DESIGN, "Tenant
 * admins stay inside their tenant"; issue 42, finding 3): at most
 * `authorization.clientScopes` when set; and a client a tenant admin makes, or
 * takes a new credential of, at most the scopes of the admin's own role — an
 * admin never mints a credential stronger than their own token. The operator
 * has no role: `clientScopes` alone bounds what they give.
 */
import { GatewayError } from '../errors.js';
import type { ClientRecord } from '../store/types.js';
import type { ClientActor, ClientDeps } from './client-deps.js';

/**
 * The scopes of `scopes` that `actor` may not give a machine client now.
 * Empty when every one is givable.
 */
export function ungivableScopes(
  deps: ClientDeps,
  actor: ClientActor,
  scopes: readonly string[],
): string[] {
  const allowed = deps.clientScopes();
  const role = actor.kind === 'member' ? deps.roles.current[actor.role] : undefined;
  const refused = scopes.filter(
    (scope) =>
      (allowed !== undefined && !allowed.includes(scope)) ||
      (role !== undefined && !role.includes(scope)),
  );
  return [...new Set(refused)];
}

/**
 * A new client's scopes, each one `actor` may give.
 * @throws GatewayError `invalid_request` naming the others: the one refusal of
 * the API and the CLI alike
 */
export function checkGivableScopes(
  deps: ClientDeps,
  actor: ClientActor,
  scopes: readonly string[],
): void {
  const refused = ungivableScopes(deps, actor, scopes);
  if (refused.length > 0) {
    throw new GatewayError(
      'invalid_request',
      `Invalid scopes: ${refused.join(', ')} is not a scope a machine client may hold.`,
    );
  }
}

/**
 * A new secret or API key of `client` is a credential with all its scopes: a
 * tenant admin takes one only of a client they could have made (each scope
 * one they may give now); one the operator made with more stays the
 * operator's to rotate. The operator may take one of any client.
 * @throws GatewayError `forbidden`
 */
export function checkCredentialTakeable(
  deps: ClientDeps,
  actor: ClientActor,
  client: ClientRecord,
): void {
  if (actor.kind === 'operator') return;
  const beyond = ungivableScopes(deps, actor, client.scopes);
  if (beyond.length > 0) {
    throw new GatewayError(
      'forbidden',
      `The client holds scopes a tenant admin may not give (${beyond.join(', ')}): only the operator gives it a new credential.`,
    );
  }
}
