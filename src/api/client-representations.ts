/**
 * The JSON shapes of the tenant admins' machine-client endpoints
 * (docs/identity-api.md#machine-clients-tenant-admins), built from store
 * records in one place. A listed client or key never carries its secret nor
 * the secret's digest; the secret itself is only in the answer that made it.
 * Each is typed by its answer's schema (`schemas/clients.ts`); the CLI prints
 * the same.
 */
import type { z } from 'zod';
import type { ApiKeyRecord, ClientRecord } from '../store/types.js';
import type {
  ApiKey,
  ApiKeyList,
  Client,
  ClientList,
  CreatedApiKey,
  CreatedClient,
  RotatedClient,
} from './schemas/clients.js';

/** A client as listed or read: `{client_id, name, scopes, created_at, expires_at, rotated_at}`. */
export function clientView(client: ClientRecord): z.infer<typeof Client> {
  return {
    client_id: client.clientId,
    name: client.name,
    scopes: client.scopes,
    created_at: client.createdAt,
    expires_at: client.expiresAt ?? null,
    rotated_at: client.rotatedAt ?? null,
  };
}

/** A tenant's clients. */
export function clientList(clients: readonly ClientRecord[]): z.infer<typeof ClientList> {
  return { clients: clients.map(clientView) };
}

/** The answer of a creation: the client and its secret, shown this once. */
export function createdClient(client: ClientRecord, secret: string): z.infer<typeof CreatedClient> {
  return {
    client_id: client.clientId,
    client_secret: secret,
    name: client.name,
    scopes: client.scopes,
    created_at: client.createdAt,
    expires_at: client.expiresAt ?? null,
  };
}

/** The answer of a rotation: the client and its new secret, shown this once. */
export function rotatedClient(client: ClientRecord, secret: string): z.infer<typeof RotatedClient> {
  return { ...clientView(client), client_secret: secret };
}

/** A key as listed: `{key_id, created_at, expires_at, last_used_at}`; never the key. */
export function keyView(key: ApiKeyRecord): z.infer<typeof ApiKey> {
  return {
    key_id: key.keyId,
    created_at: key.createdAt,
    expires_at: key.expiresAt ?? null,
    last_used_at: key.lastUsedAt ?? null,
  };
}

/** A client's keys. */
export function keyList(keys: readonly ApiKeyRecord[]): z.infer<typeof ApiKeyList> {
  return { keys: keys.map(keyView) };
}

/** The answer of a key's creation: the key, shown this once. */
export function createdKey(key: ApiKeyRecord, apiKey: string): z.infer<typeof CreatedApiKey> {
  return {
    key_id: key.keyId,
    api_key: apiKey,
    created_at: key.createdAt,
    expires_at: key.expiresAt ?? null,
  };
}
