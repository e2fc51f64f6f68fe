/**
 * The tenant admins' machine clients (`/1/tenants/:tenant_id/clients…`):
 * create, list, read and remove a client, rotate its secret, and add, list
 * and remove its API keys. The caller is an admin of the tenant
 * (`tenant-admins.ts`: a user whose role there is `admin` now). Only org
 * tenants have clients: a personal tenant's path is refused (403 `forbidden`). A client or
 * key of another tenant is 404 `not_found`, as one that does not exist.
 *
 * Each change is the operation the CLI calls too (`identity/clients.ts`,
 * `identity/api-keys.ts`), with its rules, store write and audit event: here
 * the admin acts with their role, so a client they make holds at most their
 * role's scopes (∩ `authorization.clientScopes`), and they give a new secret
 * or key only to a client they could have made. This file parses, finds the
 * tenant's client and renders. A secret or key is in the answer that made it
 * (`Cache-Control: no-store`), then never again.
 */
import type { Router } from '@koa/router';
import { isClientId, isKeyId } from '../../auth/clients/secrets.js';
import { GatewayError } from '../../errors.js';
import { addApiKey, removeApiKey } from '../../identity/api-keys.js';
import {
  createClient,
  noClient,
  removeClient,
  rotateClientSecret,
} from '../../identity/clients.js';
import type { ClientRecord } from '../../store/types.js';
import {
  clientList,
  clientView,
  createdClient,
  createdKey,
  keyList,
  rotatedClient,
} from '../client-representations.js';
import { readJsonBody } from '../request-input.js';
import { ApiKeyCreation, ClientCreation } from '../schemas/clients.js';
import type { ApiContext, ApiState } from '../state.js';
import { noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const CLIENTS = '/tenants/:tenant_id/clients';
const CLIENT = `${CLIENTS}/:client_id`;

export function addClientRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(CLIENTS, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const clients = await deps.store.clients.listClients(tenantId);
    noStore(ctx);
    ctx.body = clientList(clients);
  });
  router.post(CLIENTS, (ctx) => addClient(deps, ctx));
  router.get(CLIENT, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    noStore(ctx);
    ctx.body = clientView(client);
  });
  router.delete(CLIENT, (ctx) => deleteClient(deps, ctx));
  router.post(`${CLIENT}/secret`, (ctx) => rotateSecret(deps, ctx));
  router.get(`${CLIENT}/keys`, async (ctx) => {
    const { tenantId } = await clientsAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    const keys = await deps.store.apiKeys.listApiKeys(client.clientId);
    noStore(ctx);
    ctx.body = keyList(keys);
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
  const client = isClientId(clientId) ? await deps.store.clients.getClient(clientId) : null;
  if (client === null || client.tenantId !== tenantId) throw noClient();
  return client;
}

/** The admin as the actor of a client operation: bounded by their role's scopes. */
async function addClient(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const body = await readJsonBody(ctx, ClientCreation, deps.bodyLimit);
  const { client, secret } = await createClient(deps.clients, {
    tenantId: admin.tenantId,
    actor: admin.actor,
    name: body.name,
    scopes: body.scopes,
    expiresAt: body.expires_at,
  });
  noStore(ctx);
  ctx.status = 201;
  ctx.set('location', `/1/tenants/${client.tenantId}/clients/${client.clientId}`);
  ctx.body = createdClient(client, secret);
}

async function rotateSecret(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const found = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const { client, secret } = await rotateClientSecret(deps.clients, admin.actor, found);
  noStore(ctx);
  ctx.body = rotatedClient(client, secret);
}

async function deleteClient(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const client = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  await removeClient(deps.clients, admin.actor, client);
  ctx.status = 204;
}

async function createKey(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const client = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const body = hasBody(ctx) ? await readJsonBody(ctx, ApiKeyCreation, deps.bodyLimit) : {};
  const { key, apiKey } = await addApiKey(deps.clients, admin.actor, client, body.expires_at);
  noStore(ctx);
  ctx.status = 201;
  ctx.body = createdKey(key, apiKey);
}

async function removeKey(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await clientsAdmin(deps, ctx);
  const client = await tenantClient(deps, admin.tenantId, ctx.params.client_id as string);
  const keyId = ctx.params.key_id as string;
  const removed = isKeyId(keyId) && (await removeApiKey(deps.clients, admin.actor, client, keyId));
  if (!removed) throw new GatewayError('not_found', 'The client has no such key.');
  ctx.status = 204;
}

/** Whether the request has a body to read (a key's creation may come without one). */
function hasBody(ctx: ApiContext): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}
