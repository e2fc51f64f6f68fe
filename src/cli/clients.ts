/**
 * `client add|list|rotate|remove`: an org tenant's machine clients. A
 * client's secret is printed once, by `add` and `rotate`, and stored only as
 * its SHA-256 digest (`auth/secrets.ts`); nothing prints it again.
 */
import { newClientId, newClientSecret, secretDigest } from '../auth/secrets.js';
import type { LoadedConfig } from '../config/index.js';
import { SCOPE_PATTERN } from '../config/schema/authorization.js';
import type { Core } from '../core.js';
import type { ClientRecord } from '../store/types.js';
import { cliActor, expiresAtOption, orgTenant, print, withCore } from './store-command.js';
import { UsageError } from './usage-error.js';

export interface ClientAddOptions {
  tenant: string;
  name: string;
  scopes?: string;
  expiresAt?: string;
}

/** A client as listed: never its secret, nor the secret's digest. */
export function clientView(client: ClientRecord) {
  return {
    client_id: client.clientId,
    tenant_id: client.tenantId,
    name: client.name,
    scopes: client.scopes,
    created_at: client.createdAt,
    expires_at: client.expiresAt ?? null,
    rotated_at: client.rotatedAt ?? null,
  };
}

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
    const secret = newClientSecret();
    const client = await core.store.createClient({
      clientId: newClientId(),
      tenantId: options.tenant,
      name,
      scopes,
      secretDigest: secretDigest(secret),
      createdAt: Math.floor(Date.now() / 1000),
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
    if (client === null) throw new UsageError(`no tenant ${options.tenant}`);
    await core.audit.record('client_created', cliActor(), {
      tenant_id: client.tenantId,
      client_id: client.clientId,
      scopes: client.scopes,
    });
    const { rotated_at: _, ...view } = clientView(client);
    print({ ...view, client_secret: secret });
  });
}

export async function clientList(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, 'machine clients belong to org tenants');
    print((await core.store.listClients(tenantId)).map(clientView));
  });
}

export async function clientRotate(loaded: LoadedConfig, clientId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const secret = newClientSecret();
    const now = Math.floor(Date.now() / 1000);
    const client = await core.store.rotateClientSecret(clientId, secretDigest(secret), now);
    if (client === null) throw new UsageError(`no client ${clientId}`);
    await core.audit.record('client_secret_rotated', cliActor(), {
      tenant_id: client.tenantId,
      client_id: client.clientId,
    });
    print({ ...clientView(client), client_secret: secret });
  });
}

export async function clientRemove(loaded: LoadedConfig, clientId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const client = await existingClient(core, clientId);
    const keyIds = await core.store.removeClient(clientId);
    if (keyIds === null) throw new UsageError(`no client ${clientId}`);
    await core.audit.record('client_removed', cliActor(), {
      tenant_id: client.tenantId,
      client_id: clientId,
      key_ids: keyIds,
    });
    print({ client_id: clientId, tenant_id: client.tenantId, removed: true, keys_removed: keyIds });
  });
}

export async function existingClient(core: Core, clientId: string): Promise<ClientRecord> {
  const client = await core.store.getClient(clientId);
  if (client === null) throw new UsageError(`no client ${clientId}`);
  return client;
}
