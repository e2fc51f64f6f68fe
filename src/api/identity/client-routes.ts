/**
 * The tenant admins' machine clients (`/1/tenants/:tenant_id/clients…`):
 * create, list, read and remove a client, rotate its secret, and add, list
 * and remove its API keys. The caller is a user whose bearer token is for the
 * tenant and whose role there is `admin` *now* (read from the store on every
 * request, so a demotion takes effect at once). Only org tenants have
 * clients: a personal tenant's path is refused (403 `forbidden`). A client or
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
import type { Principal } from '../../auth/authenticate.js';
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
import { actor, bearer, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

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

/** Who may manage the tenant's clients: an admin of it, by their token for it. */
interface TenantAdmin {
  principal: Principal;
  tenantId: string;
}

const CLIENTS = '/tenants/:tenant_id/clients';
const CLIENT = `${CLIENTS}/:client_id`;

export function addClientRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(CLIENTS, async (ctx) => {
    const { tenantId } = await tenantAdmin(deps, ctx);
    const clients = await deps.store.listClients(tenantId);
    noStore(ctx);
    ctx.body = { clients: clients.map(clientView) };
  });
  router.post(CLIENTS, (ctx) => createClient(deps, ctx));
  router.get(CLIENT, async (ctx) => {
    const { tenantId } = await tenantAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    noStore(ctx);
    ctx.body = clientView(client);
  });
  router.delete(CLIENT, (ctx) => removeClient(deps, ctx));
  router.post(`${CLIENT}/secret`, (ctx) => rotateSecret(deps, ctx));
  router.get(`${CLIENT}/keys`, async (ctx) => {
    const { tenantId } = await tenantAdmin(deps, ctx);
    const client = await tenantClient(deps, tenantId, ctx.params.client_id as string);
    const keys = await deps.store.listApiKeys(client.clientId);
    noStore(ctx);
    ctx.body = { keys: keys.map(keyView) };
  });
  router.post(`${CLIENT}/keys`, (ctx) => createKey(deps, ctx));
  router.delete(`${CLIENT}/keys/:key_id`, (ctx) => removeKey(deps, ctx));
}

/**
 * The caller, when they may manage the path's tenant's clients.
 * @throws `invalid_token` (401), `tenant_mismatch`, `forbidden` (403), `not_found`
 */
async function tenantAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  const principal = await bearer(deps, ctx);
  // A machine client's token never manages clients, whatever its scopes:
  // only a user can be an admin.
  if (principal.kind !== 'user') {
    throw new GatewayError('forbidden', "Only a tenant's admins (users) manage its clients.");
  }
  const inPath = ctx.params.tenant_id as string;
  if (inPath !== 'current' && inPath !== principal.tenantId) {
    throw new GatewayError('tenant_mismatch', "The path names a tenant other than the token's.", {
      detail: inPath,
    });
  }
  const tenantId = principal.tenantId;
  const tenant = await deps.store.getTenant(tenantId);
  if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
  if (tenant.type !== 'orgtenant') {
    throw new GatewayError('forbidden', 'Machine clients belong to org tenants only.');
  }
  if ((await deps.store.getMemberRole(tenantId, principal.userId)) !== 'admin') {
    throw new GatewayError('forbidden', "Only the tenant's admins manage its clients.");
  }
  return { principal, tenantId };
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
  const admin = await tenantAdmin(deps, ctx);
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
  const admin = await tenantAdmin(deps, ctx);
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
  const admin = await tenantAdmin(deps, ctx);
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
  const admin = await tenantAdmin(deps, ctx);
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
  const admin = await tenantAdmin(deps, ctx);
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
