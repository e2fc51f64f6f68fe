/** The in-memory store's API keys of machine clients (see `memory-state.ts`). */
import type { ApiKeyRecord, ApiKeyStore, NewApiKey } from './api-keys.js';
import { idTaken } from './memory-clients.js';
import {
  addToSet,
  ensureOpen,
  listed,
  nextGeneration,
  publish,
  removeFromSet,
  type MemoryState,
} from './memory-state.js';

export function memoryApiKeys(state: MemoryState): ApiKeyStore {
  const open = () => ensureOpen(state);
  return {
    createApiKey: async (key) => createApiKey(state, key),
    getApiKey: async (keyId) => {
      open();
      const key = state.apiKeys.get(keyId);
      return key === undefined ? null : { ...key };
    },
    listApiKeys: async (clientId) => {
      open();
      return listed(state.keysOfClient.get(clientId), state.apiKeys, (key) => ({ ...key }));
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
