/** The in-memory store's one-time browser sign-in records (see `memory-state.ts`, `sso.ts`). */
import { ensureOpen, type MemoryState } from './memory-state.js';
import type { SsoStore } from './sso.js';

/** One-time records: expired ones are dropped when met, and all of them swept on each write. */
export function memorySso(state: MemoryState): SsoStore {
  const live = (name: string) => {
    const record = state.ssoRecords.get(name);
    return record !== undefined && record.expiresAt > Date.now() ? record.value : null;
  };
  const put = (name: string, value: string, ttlSeconds: number) => {
    const now = Date.now();
    for (const [k, record] of state.ssoRecords)
      if (record.expiresAt <= now) state.ssoRecords.delete(k);
    state.ssoRecords.set(name, { value, expiresAt: now + ttlSeconds * 1000 });
  };
  return {
    putSsoRecord: async (kind, key, value, ttlSeconds) => {
      ensureOpen(state);
      put(`${kind}:${key}`, value, ttlSeconds);
    },
    readSsoRecord: async (kind, key) => {
      ensureOpen(state);
      return live(`${kind}:${key}`);
    },
    addSsoRecord: async (kind, key, value, ttlSeconds) => {
      ensureOpen(state);
      if (live(`${kind}:${key}`) !== null) return false;
      put(`${kind}:${key}`, value, ttlSeconds);
      return true;
    },
    takeSsoRecord: async (kind, key) => {
      ensureOpen(state);
      const record = state.ssoRecords.get(`${kind}:${key}`);
      if (record === undefined) return null;
      state.ssoRecords.delete(`${kind}:${key}`);
      return record.expiresAt > Date.now() ? record.value : null;
    },
  };
}
