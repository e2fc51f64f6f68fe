/**
 * A machine client's scopes now (DESIGN, "Tenant admins stay inside their
 * tenant"; issue 42): the scopes stored on the client were givable when it
 * was made, but a reload may since have shrunk `authorization.clientScopes`
 * or the `admin` role's scopes. What a client holds is its stored scopes ∩
 * the live `clientScopes` (when set) ∩, for a client a tenant admin made, the
 * live scopes of the role `admin`: read where a client token is issued and
 * where an API key's principal is made (again at every reload).
 *
 * A client recorded without its maker (made before it was recorded) is
 * bounded as an admin's: before issue 42 an admin could give any scope, and
 * nothing tells such a client from one the operator made, so this fails
 * closed; the operator makes it again with `client add` to lift the bound.
 */
import type { ClientRecord } from '../../store/types.js';
import type { RoleScopes } from '../accounts.js';

/** `authorization.clientScopes` now (a reload replaces `current`); undefined: any scope. */
export interface LiveClientScopes {
  current: readonly string[] | undefined;
}

/** The live config that bounds what a machine client holds. */
export interface ClientScopeBounds {
  /** `authorization.roles` now: the role `admin` bounds a client an admin made. */
  roleScopes: RoleScopes;
  clientScopes: LiveClientScopes;
}

/** The scopes `client` holds now: sorted, each once. */
export function liveClientScopes(
  client: Pick<ClientRecord, 'scopes' | 'createdBy'>,
  bounds: ClientScopeBounds,
): string[] {
  const allowed = bounds.clientScopes.current;
  const admin = client.createdBy === 'operator' ? undefined : bounds.roleScopes.current.admin;
  return [...new Set(client.scopes)]
    .filter(
      (scope) =>
        (allowed === undefined || allowed.includes(scope)) &&
        (admin === undefined || admin.includes(scope)),
    )
    .sort();
}
