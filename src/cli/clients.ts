/**
 * `client add|list|rotate|remove`: an org tenant's machine clients, by the
 * operations the identity API runs too (`identity/clients.ts`), the operator
 * as actor: `add` refuses a scope outside `authorization.clientScopes` with
 * the API's own error. A client's secret is printed once, by `add` and
 * `rotate`, and stored only as its SHA-256 digest; nothing prints it again.
 * What it prints is the API's representation (`api/client-representations.ts`)
 * with the client's `tenant_id`, which the API has in its path.
 */
import { clientView, createdClient, rotatedClient } from '../api/client-representations.js';
import type { LoadedConfig } from '../config/index.js';
import { SCOPE_PATTERN } from '../config/schema/authorization.js';
import type { Core } from '../core/create-core.js';
import type { ClientDeps } from '../identity/client-deps.js';
import { createClient, removeClient, rotateClientSecret } from '../identity/clients.js';
import type { ClientRecord } from '../store/types.js';
import { expiresAtOption, operator, orgTenant, print, withCore } from './store-command.js';
import { UsageError } from './usage-error.js';

export interface ClientAddOptions {
  tenant: string;
  name: string;
  scopes?: string;
  expiresAt?: string;
}

/** A representation of the API's, with the client's tenant. */
const ofTenant = <T>(client: ClientRecord, view: T) => ({ ...view, tenant_id: client.tenantId });

/** `--scopes a,b`: each an OAuth scope token (RFC 6749 §3.3). */
export function scopesOption(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const scopes = value.split(',').map((scope) => scope.trim());
  for (const scope of scopes) {
    if (!SCOPE_PATTERN.test(scope)) {
      throw new UsageError(
        '--scopes must be a comma-separated list of OAuth scopes (printable ASCII without spaces, quotes or backslashes)',
      );
    }
  }
  return scopes;
}

export async function clientAdd(loaded: LoadedConfig, options: ClientAddOptions): Promise<void> {
  const scopes = scopesOption(options.scopes);
  const expiresAt = expiresAtOption(options.expiresAt);
  const name = options.name.trim();
  if (name === '') throw new UsageError('--name must not be empty');
  await withCore(loaded, async (core) => {
    await orgTenant(core, options.tenant, 'machine clients belong to org tenants');
    const { client, secret } = await createClient(clientDeps(loaded, core), {
      tenantId: options.tenant,
      actor: operator(),
      name,
      scopes,
      expiresAt,
    });
    print(ofTenant(client, createdClient(client, secret)));
  });
}

export async function clientList(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, 'machine clients belong to org tenants');
    print((await core.store.clients.listClients(tenantId)).map((c) => ofTenant(c, clientView(c))));
  });
}

export async function clientRotate(loaded: LoadedConfig, clientId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const found = await existingClient(core, clientId);
    const { client, secret } = await rotateClientSecret(
      clientDeps(loaded, core),
      operator(),
      found,
    );
    print(ofTenant(client, rotatedClient(client, secret)));
  });
}

export async function clientRemove(loaded: LoadedConfig, clientId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const client = await existingClient(core, clientId);
    const keyIds = await removeClient(clientDeps(loaded, core), operator(), client);
    print({ client_id: clientId, tenant_id: client.tenantId, removed: true, keys_removed: keyIds });
  });
}

/**
 * The machine-client operations as the operator runs them: bounded by
 * `authorization.clientScopes` of the command's config (the operator has no role).
 */
export function clientDeps(loaded: LoadedConfig, core: Core): ClientDeps {
  return {
    store: core.store,
    audit: core.audit,
    clientScopes: () => loaded.config.authorization.clientScopes,
    roles: core.roleScopes,
  };
}

export async function existingClient(core: Core, clientId: string): Promise<ClientRecord> {
  const client = await core.store.clients.getClient(clientId);
  if (client === null) throw new UsageError(`no client ${clientId}`);
  return client;
}
