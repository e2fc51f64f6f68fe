/**
 * A machine client's API keys, once for the identity API and the CLI
 * (`api/identity/client-routes.ts`, `cli/api-keys.ts`): a key is a credential
 * with all its client's scopes, so a tenant admin adds one only to a client
 * they could have made (`client-scopes.ts`). A key is returned once, stored
 * only as its SHA-256 digest.
 */
import { newApiKey, secretDigest } from '../auth/clients/secrets.js';
import type { ApiKeyRecord, ClientRecord } from '../store/types.js';
import { nowSeconds, type ClientActor, type ClientDeps } from './client-deps.js';
import { checkCredentialTakeable } from './client-scopes.js';
import { checkFuture, noClient } from './clients.js';

/**
 * Adds an API key to `client`.
 * @throws GatewayError `invalid_request` (an expiry not in the future),
 * `forbidden` (a tenant admin and a client holding more than they may give),
 * `not_found` (the client is gone)
 */
export async function addApiKey(
  deps: ClientDeps,
  actor: ClientActor,
  client: ClientRecord,
  expiresAt: number | undefined,
): Promise<{ key: ApiKeyRecord; apiKey: string }> {
  checkCredentialTakeable(deps, actor, client);
  const now = nowSeconds(deps);
  checkFuture(expiresAt, now);
  const { keyId, apiKey } = newApiKey();
  const key = await deps.store.apiKeys.createApiKey({
    keyId,
    clientId: client.clientId,
    digest: secretDigest(apiKey),
    createdAt: now,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
  if (key === null) throw noClient();
  await deps.audit.record('api_key_created', actor.audit, {
    tenant_id: key.tenantId,
    client_id: client.clientId,
    key_id: keyId,
  });
  return { key, apiKey };
}

/**
 * Removes one key of `client`, ending it on every instance before this resolves.
 * @returns false when the client has no such key (nothing is recorded)
 */
export async function removeApiKey(
  deps: ClientDeps,
  actor: ClientActor,
  client: ClientRecord,
  keyId: string,
): Promise<boolean> {
  if (!(await deps.store.apiKeys.removeApiKey(client.clientId, keyId))) return false;
  await deps.audit.record('api_key_removed', actor.audit, {
    tenant_id: client.tenantId,
    client_id: client.clientId,
    key_id: keyId,
  });
  return true;
}
