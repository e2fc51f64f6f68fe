/**
 * What the machine-client operations (`clients.ts`, `api-keys.ts`) are built
 * from, and who performs one: the operator (the CLI) or a tenant's admin (the
 * identity API). The front ends only parse, call an operation and render.
 */
import type { AuditRecorder } from '../audit/recorder.js';
import type { RoleScopes } from '../auth/accounts.js';
import type { Store } from '../store/types.js';
import type { Actor } from './actor.js';

export interface ClientDeps {
  store: Store;
  audit: AuditRecorder;
  /**
   * `authorization.clientScopes`, read at each operation (the section applies
   * live on reload): what a machine client may hold; undefined: any scope.
   */
  clientScopes: () => readonly string[] | undefined;
  /** `authorization.roles` now (a reload replaces `current`): what a tenant admin may give. */
  roles: RoleScopes;
  now?: () => number;
}

/** Who performs an operation on a machine client (`actor.ts`): the operator or a tenant admin. */
export type ClientActor = Exclude<Actor, { kind: 'self' }>;

export function nowSeconds(deps: ClientDeps): number {
  return deps.now?.() ?? Math.floor(Date.now() / 1000);
}
