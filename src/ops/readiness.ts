/**
 * Liveness and readiness. `/healthz`: the process answers. `/readyz`: signing
 * keys are loaded and the gateway is not draining; otherwise 503 with the
 * reasons, so an orchestrator stops sending traffic.
 *
 * The store is shared by every instance, so its outage makes every instance
 * unready at once: the Service is left without endpoints and clients get
 * connection refused (or the ingress's own page) instead of the gateway's
 * 503 `unavailable` JSON with a request id, and nothing is gained, since no
 * other instance could do better. So by default an unreachable
 * store is reported in the body but leaves the instance ready;
 * `readiness.requireStore: true` makes it unready (an instance with a store
 * of its own, where another instance could take over).
 */
import type { KeyRing } from '../auth/tokens/tokens.js';
import type { Store } from '../store/types.js';

export interface Readiness {
  check(): Promise<{ ready: boolean; reasons: string[]; store: 'ok' | 'unreachable' }>;
  /** From now on readiness fails: shutdown has begun. */
  drain(): void;
}

export function createReadiness(deps: {
  store: Pick<Store, 'ping'>;
  keyring: KeyRing;
  /** `readiness.requireStore`, read at each check so that a reload applies it. */
  requireStore: () => boolean;
}): Readiness {
  let draining = false;
  return {
    async check() {
      const reasons: string[] = [];
      if (draining) reasons.push('shutting down');
      if (deps.keyring.current.byKid.size === 0) reasons.push('no signing keys loaded');
      let store: 'ok' | 'unreachable' = 'ok';
      try {
        await deps.store.ping();
      } catch {
        store = 'unreachable';
        if (deps.requireStore()) reasons.push('store unreachable');
      }
      return { ready: reasons.length === 0, reasons, store };
    },
    drain() {
      draining = true;
    },
  };
}
