/** The in-memory store's TOTP records (see `memory-state.ts`, `totp.ts`). */
import { ensureOpen, type MemoryState, type MemoryTotp } from './memory-state.js';
import type { TotpRecord, TotpStore } from './totp.js';

function recordOf(userId: string, held: MemoryTotp): TotpRecord {
  return {
    userId,
    ...(held.secretSealed === undefined ? {} : { secretSealed: held.secretSealed }),
    ...(held.confirmedAt === undefined ? {} : { confirmedAt: held.confirmedAt }),
    lastStep: held.lastStep,
    recoveryCodesLeft: held.recoveryDigests.size,
    ...(held.pending === undefined ? {} : { pending: { ...held.pending } }),
  };
}

export function memoryTotp(state: MemoryState): TotpStore {
  const open = () => ensureOpen(state);
  return {
    putPendingTotp: async (userId, pending) => {
      open();
      if (!state.users.has(userId)) return false;
      const held = state.totp.get(userId) ?? { lastStep: 0, recoveryDigests: new Set<string>() };
      held.pending = { ...pending };
      state.totp.set(userId, held);
      return true;
    },
    getTotp: async (userId) => {
      open();
      const held = state.totp.get(userId);
      return held === undefined ? null : recordOf(userId, held);
    },
    confirmTotp: async (userId, secretSealed, { step, recoveryDigests, at }) => {
      open();
      const held = state.totp.get(userId);
      if (held?.pending?.secretSealed !== secretSealed) return false;
      state.totp.set(userId, {
        secretSealed,
        confirmedAt: at,
        lastStep: step,
        recoveryDigests: new Set(recoveryDigests),
      });
      return true;
    },
    acceptTotpStep: async (userId, step) => {
      open();
      const held = state.totp.get(userId);
      if (held?.secretSealed === undefined || step <= held.lastStep) return false;
      held.lastStep = step;
      return true;
    },
    takeRecoveryCode: async (userId, digest) => {
      open();
      const held = state.totp.get(userId);
      return held?.secretSealed !== undefined && held.recoveryDigests.delete(digest);
    },
    removeTotp: async (userId) => {
      open();
      return state.totp.delete(userId);
    },
  };
}
