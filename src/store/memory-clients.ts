/** The in-memory store's machine clients and their API keys (see `memory-state.ts`). */
import { GatewayError } from '../errors.js';
import {
  addToSet,
  ensureOpen,
  nextGeneration,
  publish,
  removeFromSet,
  type MemoryState,
} from './memory-state.js';
import { compareIds, normaliseScopes } from './normalise.js';
import type { ApiKeyRecord, ClientRecord, NewApiKey, NewClient, Store } from './types.js';

type ClientMethods = Pick<
  Store,
  | 'createClient'
  | 'getClient'
  | 'listClients'
  | 'rotateClientSecret'
  | 'removeClient'
  | 'createApiKey'
  | 'getApiKey'
  | 'listApiKeys'
  | 'removeApiKey'
  | 'touchApiKey'
>;

const copyClient = (client: ClientRecord): ClientRecord => ({
  ...client,
  scopes: [...client.scopes],
});

export function memoryClients(state: MemoryState): ClientMethods {
  const open = () => ensureOpen(state);
  return {
    createClient: async (client) => createClient(state, client),
    getClient: async (clientId) => {
      open();
      const client = state.clients.get(clientId);
      return client === undefined ? null : copyClient(client);
    },
    listClients: async (tenantId) => {
      open();
      const ids = [...(state.clientsOfTenant.get(tenantId) ?? [])].sort(compareIds);
      return ids.flatMap((id) => {
        const client = state.clients.get(id);
        return client === undefined ? [] : [copyClient(client)];
      });
    },
    rotateClientSecret: async (clientId, secretDigest, now) => {
      open();
      const client = state.clients.get(clientId);
      if (client === undefined) return null;
      Object.assign(client, { secretDigest, rotatedAt: now, generation: nextGeneration(state) });
      publish(state, { kind: 'client-changed', clientId });
      return copyClient(client);
    },
    removeClient: async (clientId) => {
      open();
      const client = state.clients.get(clientId);
      if (client === undefined) return null;
      nextGeneration(state);
      return removeClientRecords(state, client);
    },
    createApiKey: async (key) => createApiKey(state, key),
    getApiKey: async (keyId) => {
      open();
      const key = state.apiKeys.get(keyId);
      return key === undefined ? null : { ...key };
    },
    listApiKeys: async (clientId) => {
      open();
      const ids = [...(state.keysOfClient.get(clientId) ?? [])].sort(compareIds);
      return ids.flatMap((id) => {
        const key = state.apiKeys.get(id);
        return key === undefined ? [] : [{ ...key }];
      });
    },
    removeApiKey: async (clientId, keyId) => {
      open();
      if (!removeFromSet(state.keysOfClient, clientId, keyId)) return false;
      state.apiKeys.delete(keyId);
      nextGeneration(state);
      publish(state, { kind: 'client-changed', clientId });
      return true;
    },
    touchApiKey: async (keyId, at) => {
      open();
      const key = state.apiKeys.get(keyId);
      if (key !== undefined && !(key.lastUsedAt !== undefined && key.lastUsedAt >= at)) {
        key.lastUsedAt = at;
      }
    },
  };
}

/** Removes every client of the tenant and their keys (the tenant is going). */
export function removeTenantClients(state: MemoryState, tenantId: string): void {
  for (const clientId of state.clientsOfTenant.get(tenantId) ?? []) {
    const client = state.clients.get(clientId);
    if (client !== undefined) removeClientRecords(state, client);
  }
  state.clientsOfTenant.delete(tenantId);
}

function createClient(state: MemoryState, input: NewClient): ClientRecord | null {
  ensureOpen(state);
  if (state.tenants.get(input.tenantId)?.type !== 'orgtenant') return null;
  if (state.clients.has(input.clientId)) throw idTaken('client');
  const client: ClientRecord = {
    ...input,
    scopes: normaliseScopes(input.scopes),
    generation: nextGeneration(state),
  };
  state.clients.set(client.clientId, client);
  addToSet(state.clientsOfTenant, client.tenantId, client.clientId);
  return copyClient(client);
}

function createApiKey(state: MemoryState, input: NewApiKey): ApiKeyRecord | null {
  ensureOpen(state);
  const client = state.clients.get(input.clientId);
  if (client === undefined) return null;
  if (state.apiKeys.has(input.keyId)) throw idTaken('key');
  const key: ApiKeyRecord = {
    ...input,
    tenantId: client.tenantId,
    generation: nextGeneration(state),
  };
  state.apiKeys.set(key.keyId, key);
  addToSet(state.keysOfClient, key.clientId, key.keyId);
  return { ...key };
}

/** @returns the ids of the client's keys, sorted. */
function removeClientRecords(state: MemoryState, client: ClientRecord): string[] {
  const keyIds = [...(state.keysOfClient.get(client.clientId) ?? [])].sort(compareIds);
  for (const keyId of keyIds) state.apiKeys.delete(keyId);
  state.keysOfClient.delete(client.clientId);
  removeFromSet(state.clientsOfTenant, client.tenantId, client.clientId);
  state.clients.delete(client.clientId);
  publish(state, { kind: 'client-changed', clientId: client.clientId });
  return keyIds;
}

function idTaken(kind: string): GatewayError {
  return new GatewayError('internal_error', `The ${kind} id is already in use.`);
}
