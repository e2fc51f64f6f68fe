/**
 * A machine client's lifecycle, once for the identity API and the CLI
 * (`api/identity/client-routes.ts`, `cli/clients.ts`): each operation checks
 * its rules (`client-scopes.ts`), writes the store and records the audit
 * event. The caller has found the tenant or client it names and checked that
 * the actor may manage it; a secret is returned once, never stored but as its
 * SHA-256 digest (`auth/clients/secrets.ts`).
 */
import { newClientId, newClientSecret, secretDigest } from '../auth/clients/secrets.js';
import { GatewayError } from '../errors.js';
import type { ClientRecord } from '../store/types.js';
import { nowSeconds, type ClientActor, type ClientDeps } from './client-deps.js';
import { checkCredentialTakeable, checkGivableScopes } from './client-scopes.js';

export interface NewClientInput {
  /** An org tenant. */
  tenantId: string;
  actor: ClientActor;
  /** Trimmed, not empty. */
  name: string;
  /** OAuth scope tokens. */
  scopes: readonly string[];
  /** Unix seconds, in the future; undefined: no expiry. */
  expiresAt?: number | undefined;
}

/** A client with its secret, to show this once. */
export interface ClientWithSecret {
  client: ClientRecord;
  secret: string;
}

/**
 * Creates a client of `input.tenantId` holding `input.scopes`.
 * @throws GatewayError `invalid_request` (a scope the actor may not give, an
 * expiry not in the future), `not_found` (no such org tenant)
 */
export async function createClient(
  deps: ClientDeps,
  input: NewClientInput,
): Promise<ClientWithSecret> {
  checkGivableScopes(deps, input.actor, input.scopes);
  const now = nowSeconds(deps);
  checkFuture(input.expiresAt, now);
  const secret = newClientSecret();
  const client = await deps.store.clients.createClient({
    clientId: newClientId(),
    tenantId: input.tenantId,
    name: input.name,
    scopes: [...input.scopes],
    secretDigest: secretDigest(secret),
    createdAt: now,
    // What bounds its scopes from now on (`auth/clients/client-scope-bounds.ts`).
    createdBy: input.actor.kind === 'member' ? 'admin' : 'operator',
    ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt }),
  });
  if (client === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
  await deps.audit.record('client_created', input.actor.audit, {
    tenant_id: client.tenantId,
    client_id: client.clientId,
    scopes: client.scopes,
  });
  return { client, secret };
}

/**
 * Gives `client` a new secret; the old one is refused from then on, on every
 * instance before this resolves.
 * @throws GatewayError `forbidden` (a tenant admin and a client holding more
 * than they may give), `not_found` (the client is gone)
 */
export async function rotateClientSecret(
  deps: ClientDeps,
  actor: ClientActor,
  client: ClientRecord,
): Promise<ClientWithSecret> {
  checkCredentialTakeable(deps, actor, client);
  const secret = newClientSecret();
  const rotated = await deps.store.clients.rotateClientSecret(
    client.clientId,
    secretDigest(secret),
    nowSeconds(deps),
  );
  if (rotated === null) throw noClient();
  await deps.audit.record('client_secret_rotated', actor.audit, {
    tenant_id: rotated.tenantId,
    client_id: rotated.clientId,
  });
  return { client: rotated, secret };
}

/**
 * Removes `client` and its API keys, ending what they covered on every
 * instance before this resolves.
 * @returns the ids of the keys removed with it
 * @throws GatewayError `not_found` (the client is gone)
 */
export async function removeClient(
  deps: ClientDeps,
  actor: ClientActor,
  client: ClientRecord,
): Promise<string[]> {
  const keyIds = await deps.store.clients.removeClient(client.clientId);
  if (keyIds === null) throw noClient();
  await deps.audit.record('client_removed', actor.audit, {
    tenant_id: client.tenantId,
    client_id: client.clientId,
    key_ids: keyIds,
  });
  return keyIds;
}

/** @throws GatewayError `invalid_request` unless `expiresAt` is undefined or after `now` */
export function checkFuture(expiresAt: number | undefined, now: number): void {
  if (expiresAt !== undefined && expiresAt <= now) {
    throw new GatewayError(
      'invalid_request',
      'Invalid expires_at: must be a Unix time (seconds) in the future.',
    );
  }
}

export const noClient = (): GatewayError =>
  new GatewayError('not_found', 'The tenant has no such client.');
