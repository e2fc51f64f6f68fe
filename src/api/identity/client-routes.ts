/**
 * The tenant admins' machine clients (`/1/tenants/:tenant_id/clients…`):
 * create, list, read and remove a client, rotate its secret, and add, list
 * and remove its API keys. The caller is an admin of the tenant
 * (`tenant-admins.ts`: a user whose role there is `admin` now). Only org
 * tenants have clients: a personal tenant's path is refused (403 `forbidden`). A client or
 * key of another tenant is 404 `not_found`, as one that does not exist.
 *
 * A secret or key is in the answer that made it (`Cache-Control: no-store`),
 * then never again: the store keeps its SHA-256 digest (`auth/secrets.ts`).
 * Removing a client, rotating its secret or removing a key is the store
 * method the CLI calls too (`cli/clients.ts`, `cli/api-keys.ts`): it ends
 * what the client or key covered on every instance before it resolves.
 */
import type { Router } from '@koa/router';
import { z } from 'zod';
import {
  isClientId,
  isKeyId,
  newApiKey,
  newClientId,
  newClientSecret,
  secretDigest,
} from '../../auth/secrets.js';
import { SCOPE_PATTERN } from '../../config/schema/authorization.js';
import { GatewayError } from '../../errors.js';
import type { ClientRecord } from '../../store/types.js';
import {
  clientView,
  createdClient,
  createdKey,
  keyView,
  rotatedClient,
} from '../client-representations.js';
import { readJsonBody } from '../request-input.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const expiresAt = z.number().int().positive().optional();

const clientBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  scopes: z
    .array(
      z
        .string()
        .regex(
          SCOPE_PATTERN,
          'each must be an OAuth scope: printable ASCII without spaces, quotes or backslashes',
        ),
    )
    .max(100),
  expires_at: expiresAt,
});

const keyBody = z.strictObject({ expires_at: expiresAt });

const CLIENTS = '/tenants/:tenant_id/clients';
const CLIENT = `${CLIENTS}/:client_id`;

export function addClientRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(CLIENTS, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const clients = await deps.store.listClients(tenantId);
    noStore(ctx);
    ctx.body = { clients: clients.map(clientView) };
  });
  router.post(CLIENTS, (ctx) => createClient(deps, ctx));
  router.get(CLIENT, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    noStore(ctx);
    ctx.body = clientView(client);
  });
  router.delete(CLIENT, (ctx) => removeClient(deps, ctx));
  router.post(`${CLIENT}/secret`, (ctx) => rotateSecret(deps, ctx));
  router.get(`${CLIENT}/keys`, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    const keys = await deps.store.listApiKeys(client.clientId);
    noStore(ctx);
    ctx.body = { keys: keys.map(keyView) };
  });
  router.post(`${CLIENT}/keys`, (ctx) => createKey(deps, ctx));
  router.delete(`${CLIENT}/keys/:key_id`, (ctx) => removeKey(deps, ctx));
}

/** The caller, when an admin of the path's tenant (`tenant-admins.ts`). */
function clientsAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its clients',
    orgOnly: 'Machine clients belong to org tenants only.',
  });
}

/** The tenant's client named in the path; another tenant's is as unknown as none. */
async function tenantClient(
  deps: IdentityRouterDeps,
  tenantId: string,
  clientId: string,
): Promise<ClientRecord> {
  const client = isClientId(clientId) ? await deps.store.getClient(clientId) : null;
  if (client === null || client.tenantId !== tenantId) {
    throw new GatewayError('not_found', 'The tenant has no such client.');
  }
  return client;
}

async function createClient(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const body = await readJsonBody(ctx, clientBody, deps.bodyLimit);
  const allowed = deps.clientScopes?.();
  const refused = allowed === undefined ? [] : body.scopes.filter((s) => !allowed.includes(s));
  if (refused.length > 0) {
    throw new GatewayError(
      'invalid_request',
      `Invalid scopes: ${refused.join(', ')} is not a scope a machine client may hold.`,
    );
  }
  const secret = newClientSecret();
  const client = await deps.store.createClient({
    clientId: newClientId(),
    tenantId: admin.tenantId,
    name: body.name,
    scopes: body.scopes,
    secretDigest: secretDigest(secret),
    createdAt: nowSeconds(),
    ...futureExpiry(body.expires_at),
  });
  if (client === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
  await deps.audit.record('client_created', actor(deps, ctx, admin.principal.email), {
    tenant_id: client.tenantId,
    client_id: client.clientId,
    scopes: client.scopes,
  });
  noStore(ctx);
  ctx.status = 201;
  ctx.set('location', `/1/tenants/${client.tenantId}/clients/${client.clientId}`);
  ctx.body = createdClient(client, secret);
}

async function rotateSecret(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const { clientId } = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const secret = newClientSecret();
  const client = await deps.store.rotateClientSecret(clientId, secretDigest(secret), nowSeconds());
  if (client === null) throw new GatewayError('not_found', 'The tenant has no such client.');
  await deps.audit.record('client_secret_rotated', actor(deps, ctx, admin.principal.email), {
    tenant_id: client.tenantId,
    client_id: clientId,
  });
  noStore(ctx);
  ctx.body = rotatedClient(client, secret);
}

async function removeClient(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const { clientId } = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const keyIds = await deps.store.removeClient(clientId);
  if (keyIds === null) throw new GatewayError('not_found', 'The tenant has no such client.');
  await deps.audit.record('client_removed', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    client_id: clientId,
    key_ids: keyIds,
  });
  ctx.status = 204;
}

async function createKey(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const { clientId } = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const body = hasBody(ctx) ? await readJsonBody(ctx, keyBody, deps.bodyLimit) : {};
  const { keyId, apiKey } = newApiKey();
  const key = await deps.store.createApiKey({
    keyId,
    clientId,
    digest: secretDigest(apiKey),
    createdAt: nowSeconds(),
    ...futureExpiry(body.expires_at),
  });
  if (key === null) throw new GatewayError('not_found', 'The tenant has no such client.');
  await deps.audit.record('api_key_created', actor(deps, ctx, admin.principal.email), {
    tenant_id: key.tenantId,
    client_id: clientId,
    key_id: keyId,
  });
  noStore(ctx);
  ctx.status = 201;
  ctx.body = createdKey(key, apiKey);
}

async function removeKey(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const { clientId } = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const keyId = ctx.params.key_id as string;
  if (!isKeyId(keyId) || !(await deps.store.removeApiKey(clientId, keyId))) {
    throw new GatewayError('not_found', 'The client has no such key.');
  }
  await deps.audit.record('api_key_removed', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    client_id: clientId,
    key_id: keyId,
  });
  ctx.status = 204;
}

/** `{expiresAt}` when `expires_at` was given; it must lie in the future. @throws `invalid_request` */
function futureExpiry(seconds: number | undefined): { expiresAt?: number } {
  if (seconds === undefined) return {};
  if (seconds <= nowSeconds()) {
    throw new GatewayError(
      'invalid_request',
      'Invalid expires_at: must be a Unix time (seconds) in the future.',
    );
  }
  return { expiresAt: seconds };
}

/** Whether the request has a body to read (a key's creation may come without one). */
function hasBody(ctx: ApiContext): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
