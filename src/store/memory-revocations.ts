/** The in-memory store's token deny-list and session events (see `memory-state.ts`). */
import { ensureOpen, publish, type MemoryState } from './memory-state.js';
import { revocationDeadlineMs } from './normalise.js';
import type { RevocationStore } from './revocations.js';

/** Below this many deny-list entries a sweep for expired ones is not worth it. */
const MIN_SWEEP_SIZE = 1024;

export function memoryRevocations(state: MemoryState): RevocationStore {
  const { revoked } = state;
  let nextSweepAt = MIN_SWEEP_SIZE;

  // Lazy purge: entries are dropped when read, and in a sweep whenever the map
  // has doubled since the last one, so tokens never checked again do not pile up.
  function sweepRevoked(now: number): void {
    if (revoked.size < nextSweepAt) return;
    for (const [jti, deadline] of revoked) {
      if (now > deadline) revoked.delete(jti);
    }
    nextSweepAt = Math.max(MIN_SWEEP_SIZE, revoked.size * 2);
  }

  return {
    async revokeToken(jti, expiresAt) {
      ensureOpen(state);
      const deadline = revocationDeadlineMs(expiresAt);
      const now = Date.now();
      sweepRevoked(now);
      // An expired token is refused anyway: no entry, and none shortened.
      if (now > deadline) return;
      revoked.set(jti, deadline);
      publish(state, { kind: 'token-revoked', jti });
    },
    async isTokenRevoked(jti) {
      ensureOpen(state);
      const deadline = revoked.get(jti);
      if (deadline === undefined) return false;
      if (Date.now() > deadline) {
        revoked.delete(jti);
        return false;
      }
      return true;
    },
    watchSessions(listener) {
      state.listeners.add(listener);
      listener.onLive(true);
      return () => {
        state.listeners.delete(listener);
      };
    },
  };
}
