/** The in-memory store's invitations (see `memory-state.ts`): by token digest. */
import type { InvitationRecord, InvitationStore } from './invitations.js';
import { ensureOpen, type MemoryState } from './memory-state.js';

export function memoryInvitations(state: MemoryState): InvitationStore {
  const live = (digest: string, now: number): InvitationRecord | null => {
    ensureOpen(state);
    const record = state.invitations.get(digest);
    if (record === undefined) return null;
    if (record.expiresAt <= now) {
      state.invitations.delete(digest);
      return null;
    }
    return record;
  };
  const ofTenant = (tenantId: string) =>
    [...state.invitations.values()].filter((r) => r.tenantId === tenantId);
  return {
    addInvitation: async (record, maxPending) => {
      ensureOpen(state);
      if (ofTenant(record.tenantId).length >= maxPending) return false;
      state.invitations.set(record.tokenDigest, { ...record });
      return true;
    },
    listInvitations: async (tenantId, now) =>
      ofTenant(tenantId)
        .filter((r) => live(r.tokenDigest, now) !== null)
        .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id))
        .map((r) => ({ ...r })),
    findInvitation: async (digest, now) => {
      const record = live(digest, now);
      return record === null ? null : { ...record };
    },
    takeInvitation: async (digest, now) => {
      const record = live(digest, now);
      if (record === null) return null;
      state.invitations.delete(digest);
      return record;
    },
    removeInvitation: async (tenantId, id) => {
      ensureOpen(state);
      const record = ofTenant(tenantId).find((r) => r.id === id);
      if (record === undefined) return null;
      state.invitations.delete(record.tokenDigest);
      return record;
    },
  };
}
