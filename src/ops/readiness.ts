/**
 * Liveness and readiness. `/healthz`: the process answers. `/readyz`: the
 * store answers, signing keys are loaded and the gateway is not draining;
 * otherwise 503 with the reasons, so an orchestrator stops sending traffic.
 */
import type { KeyRing } from '../auth/tokens.js';
import type { Store } from '../store/types.js';

export interface Readiness {
  check(): Promise<{ ready: boolean; reasons: string[] }>;
  /** From now on readiness fails: shutdown has begun. */
  drain(): void;
}

export function createReadiness(deps: { store: Store; keyring: KeyRing }): Readiness {
  let draining = false;
  return {
    async check() {
      const reasons: string[] = [];
      if (draining) reasons.push('shutting down');
      if (deps.keyring.current.byKid.size === 0) reasons.push('no signing keys loaded');
      try {
        await deps.store.ping();
      } catch {
        reasons.push('store unreachable');
      }
      return { ready: reasons.length === 0, reasons };
    },
    drain() {
      draining = true;
    },
  };
}
