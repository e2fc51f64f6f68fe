/** The in-memory store's machine clients (see `memory-state.ts`); their keys in `memory-api-keys.ts`. */
import { GatewayError } from '../errors.js';
import {
  addToSet,
  ensureOpen,
  listed,
  nextGeneration,
  publish,
  removeFromSet,
  type MemoryState,
} from './memory-state.js';
import { compareIds, normaliseScopes } from './normalise.js';
import type { ClientRecord, ClientStore, NewClient } from './clients.js';

const copyClient = (client: ClientRecord): ClientRecord => ({
  ...client,
  scopes: [...client.scopes],
});

export function memoryClients(state: MemoryState): ClientStore {
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
      return listed(state.clientsOfTenant.get(tenantId), state.clients, copyClient);
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

export function idTaken(kind: string): GatewayError {
  return new GatewayError('internal_error', `The ${kind} id is already in use.`);
}
