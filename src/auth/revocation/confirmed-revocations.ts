/**
 * Lease mode's revoker side: a store whose revoking writes — a token revoked,
 * a password changed (or a user disabled), a member's role changed, a
 * membership, user or tenant removed — resolve only once every instance holding a revocation lease has
 * applied the change, or no longer holds its lease. A machine client rotated or
 * removed, or one of its API keys removed, is confirmed the same way
 * (`client-changed`). The caller answers 204
 * after that, so a request that reaches any instance after the 204 is judged
 * on the new state: the instance either applied it, or stopped trusting its
 * cache when its lease ran out (`revocation-lease.ts`).
 *
 * The confirmation request carries the events themselves, so an instance
 * needs no ordering between it and the write's own publication (on Redis
 * Cluster they may come from different nodes). Its membership events name
 * the pair without a generation: an instance applies one by forgetting what
 * it knew of the pair, so its next verdict for it comes from the store —
 * right whether the confirmation arrives before or after the write's own
 * event, or after a later change of the same pair.
 */
import { randomUUID } from 'node:crypto';
import { REVOKING_WRITES, type RevokingWrite } from '../../store/revoking-writes.js';
import type { RevocationLeases, SessionEvent, Store, StoreSliceName } from '../../store/types.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The longest pause between two looks at the acknowledgements (ms). */
const MAX_POLL_MS = 20;

export interface ConfirmationObserver {
  /** A revocation confirmed in `seconds`; `fenced`: some holder did not answer and lost its lease. */
  (seconds: number, fenced: boolean): void;
}

/**
 * `store` with its revoking writes — the ones `store/revoking-writes.ts`
 * declares — confirmed; `store` itself when it has no leases. Holders get
 * half a lease to acknowledge; the lease of one that has not is then ended
 * and waited out, so a revocation takes at most 1.5 leases.
 */
export function confirmRevocations(
  store: Store,
  leaseMs: number,
  observe?: ConfirmationObserver,
): Store {
  const leases = store.revocations.leases;
  if (leases === undefined) return store;
  const confirm = async (events: SessionEvent[]): Promise<void> => {
    if (events.length === 0) return;
    const started = performance.now();
    const fenced = await confirmed(leases, events, leaseMs / 2);
    observe?.((performance.now() - started) / 1000, fenced);
  };
  const slices = Object.entries(REVOKING_WRITES) as [StoreSliceName, DeclaredWrites][];
  return {
    ...store,
    ...Object.fromEntries(
      slices.map(([slice, writes]) => [slice, confirmedSlice(store, slice, writes, confirm)]),
    ),
  };
}

type Operation = (...args: unknown[]) => Promise<unknown>;
type DeclaredWrites = Record<string, RevokingWrite<Operation>>;

/** The slice with each of its declared writes resolving once confirmed. */
function confirmedSlice(
  store: Store,
  slice: StoreSliceName,
  writes: DeclaredWrites,
  confirm: (events: SessionEvent[]) => Promise<void>,
): object {
  const inner = store[slice] as unknown as Record<string, Operation>;
  const outer = { ...inner };
  for (const [name, write] of Object.entries(writes)) {
    const operation = inner[name] as Operation;
    outer[name] = async (...args) => {
      const before = await write.before?.(store, ...args);
      const result = await operation(...args);
      await confirm(write.events(result, args, before));
      return result;
    };
  }
  return outer;
}

/**
 * Publishes the confirmation request and waits for every live holder's
 * acknowledgement, at most `waitMs`; then fences the silent ones and waits
 * out what their leases had left. Resolves whether any was fenced.
 */
async function confirmed(
  leases: RevocationLeases,
  events: readonly SessionEvent[],
  waitMs: number,
): Promise<boolean> {
  const id = randomUUID();
  await leases.requestConfirmation(id, events);
  const deadline = performance.now() + waitMs;
  for (
    let pause = 1;
    (await leases.unacknowledged(id)) > 0;
    pause = Math.min(pause * 2, MAX_POLL_MS)
  ) {
    const left = deadline - performance.now();
    if (left > 0) {
      await sleep(Math.min(pause, left));
      continue;
    }
    const leaseLeft = await leases.fenceUnacknowledged(id);
    if (leaseLeft > 0) await sleep(leaseLeft);
    return true;
  }
  return false;
}
