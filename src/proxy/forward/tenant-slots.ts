/**
 * The connection slots of one upstream pool, shared between tenants (issue
 * 12: one token's slow uploads held every pooled connection and starved the
 * other tenants). At most `maxConnections` requests are in flight to the
 * upstream; a request that finds them all taken waits in line (first come,
 * first served) until one frees or its caller gives up. A tenant holds at most
 * `maxPerTenant` slots, in flight and waiting together: past that it is
 * refused at once, so neither the connections nor the line can be one
 * tenant's.
 *
 * Apart from the forwarder, so that it can front an undici Pool the same way:
 * the pool then never queues on its own, and a caller's timeout or departure
 * is simply `leave`.
 */

/** Where a holder stands; managed by its {@link TenantSlots}, read-only to others. */
export type SlotState = 'none' | 'waiting' | 'held';

/** A request asking for a slot (the forwarder's per-request record). */
export interface SlotHolder {
  /** The tenant it counts against. */
  readonly tenant: string;
  slot: SlotState;
}

export interface TenantSlots<H extends SlotHolder> {
  /**
   * Asks for a slot: `held` (go ahead), `waiting` (the pool is full; `granted`
   * is called when a slot frees), or `refused` (the tenant's share is taken).
   */
  acquire(holder: H): 'held' | 'waiting' | 'refused';
  /** Gives back a held slot or a place in line (idempotent); a slot freed goes to the next in line. */
  leave(holder: H): void;
  /** Resolves once no slot is held and nobody waits (at once if so now). */
  drained(): Promise<void>;
}

export interface SlotLimits {
  maxConnections: number;
  /** Omitted: a quarter of `maxConnections` (at least 1). */
  maxPerTenant?: number | undefined;
}

/** The share one tenant gets when the config names none. */
export function tenantShare(limits: SlotLimits): number {
  return limits.maxPerTenant ?? Math.max(1, Math.floor(limits.maxConnections / 4));
}

/**
 * @param granted called, synchronously inside `leave`, for a waiting holder
 *   that now holds a slot.
 */
export function createTenantSlots<H extends SlotHolder>(
  limits: SlotLimits,
  granted: (holder: H) => void,
): TenantSlots<H> {
  const maxConnections = limits.maxConnections;
  const maxPerTenant = tenantShare(limits);
  /** Slots per tenant, held and waiting; a tenant with none has no entry. */
  const perTenant = new Map<string, number>();
  const line: H[] = [];
  let inFlight = 0;
  let onDrained: (() => void)[] = [];

  function untake(tenant: string): void {
    const count = (perTenant.get(tenant) ?? 1) - 1;
    if (count === 0) perTenant.delete(tenant);
    else perTenant.set(tenant, count);
  }

  return {
    acquire(holder) {
      const count = perTenant.get(holder.tenant) ?? 0;
      if (count >= maxPerTenant) return 'refused';
      perTenant.set(holder.tenant, count + 1);
      if (inFlight < maxConnections) {
        inFlight++;
        holder.slot = 'held';
      } else {
        line.push(holder);
        holder.slot = 'waiting';
      }
      return holder.slot;
    },
    leave(holder) {
      const state = holder.slot;
      if (state === 'none') return;
      holder.slot = 'none';
      untake(holder.tenant);
      if (state === 'waiting') {
        // Only a holder that gave up leaves the line this way: not the hot path.
        const at = line.indexOf(holder);
        if (at >= 0) line.splice(at, 1);
        return;
      }
      const next = line.shift();
      if (next === undefined) {
        inFlight--;
        if (inFlight === 0 && onDrained.length > 0) {
          for (const resolve of onDrained) resolve();
          onDrained = [];
        }
        return;
      }
      // The slot passes straight to the next in line: inFlight stays.
      next.slot = 'held';
      granted(next);
    },
    drained() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => onDrained.push(resolve));
    },
  };
}
