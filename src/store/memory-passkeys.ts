/** The in-memory store's passkeys (see `memory-state.ts`, `passkeys.ts`). */
import { ensureOpen, addToSet, removeFromSet, type MemoryState } from './memory-state.js';
import { compareIds } from './normalise.js';
import {
  counterAccepted,
  MAX_USER_PASSKEYS,
  type PasskeyRecord,
  type PasskeyStore,
} from './passkeys.js';

const copy = (record: PasskeyRecord): PasskeyRecord => ({
  ...record,
  transports: [...record.transports],
});

export function memoryPasskeys(state: MemoryState): PasskeyStore {
  const open = () => ensureOpen(state);
  return {
    addPasskey: async (record) => {
      open();
      if (!state.users.has(record.userId)) return 'no_user';
      if (state.passkeys.has(record.credentialId)) return 'credential_taken';
      if ((state.passkeysOfUser.get(record.userId)?.size ?? 0) >= MAX_USER_PASSKEYS)
        return 'too_many';
      state.passkeys.set(record.credentialId, copy(record));
      addToSet(state.passkeysOfUser, record.userId, record.credentialId);
      return 'added';
    },
    listPasskeys: async (userId) => {
      open();
      const ids = [...(state.passkeysOfUser.get(userId) ?? [])];
      return ids
        .flatMap((id) => {
          const record = state.passkeys.get(id);
          return record === undefined ? [] : [copy(record)];
        })
        .sort(byAge);
    },
    getPasskey: async (credentialId) => {
      open();
      const record = state.passkeys.get(credentialId);
      return record === undefined ? null : copy(record);
    },
    usePasskey: async (credentialId, counter, at) => {
      open();
      const record = state.passkeys.get(credentialId);
      if (record === undefined) return 'missing';
      if (!counterAccepted(record.counter, counter)) return 'counter_regressed';
      record.counter = counter;
      record.lastUsedAt = at;
      return 'used';
    },
    removePasskey: async (userId, passkeyId) => {
      open();
      for (const id of state.passkeysOfUser.get(userId) ?? []) {
        const record = state.passkeys.get(id);
        if (record?.passkeyId !== passkeyId) continue;
        state.passkeys.delete(id);
        removeFromSet(state.passkeysOfUser, userId, id);
        return copy(record);
      }
      return null;
    },
  };
}

/** Oldest first, then by passkey id: the order both stores list in. */
export function byAge(a: PasskeyRecord, b: PasskeyRecord): number {
  return a.createdAt - b.createdAt || compareIds(a.passkeyId, b.passkeyId);
}

/** Removes every passkey of the user (the user goes). */
export function removeUserPasskeys(state: MemoryState, userId: string): void {
  for (const id of state.passkeysOfUser.get(userId) ?? []) state.passkeys.delete(id);
  state.passkeysOfUser.delete(userId);
}
