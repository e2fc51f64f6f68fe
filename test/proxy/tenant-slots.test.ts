/**
 * `tenant-slots.ts` promises: at most `maxConnections` holders hold a slot at
 * once; the rest wait in one line, first come first served across tenants; a
 * tenant counts at most its share of slots, held and waiting together, and is
 * refused at once past it; `leave` is idempotent and hands a freed slot
 * straight to the next in line (calling `granted` synchronously); `drained()`
 * resolves once nothing is held and nobody waits.
 */
import { describe, expect, it } from 'vitest';
import {
  createTenantSlots,
  type SlotHolder,
  type SlotLimits,
  tenantShare,
} from '../../src/proxy/forward/tenant-slots.js';

/** A request for a slot; `id` tells apart two of one tenant in `toEqual`. */
interface Request extends SlotHolder {
  readonly id: number;
}

let requests = 0;
const holder = (tenant: string): Request => ({ tenant, slot: 'none', id: ++requests });

/** Slots plus the holders `granted` was called for, in order. */
function setup(limits: SlotLimits) {
  const granted: Request[] = [];
  const slots = createTenantSlots<Request>(limits, (h) => granted.push(h));
  return { slots, granted };
}

/** A holder per tenant, each acquiring in turn: the first ones hold, the rest wait in line. */
function inLine<T extends string[]>(
  slots: { acquire(h: Request): unknown },
  ...tenants: T
): { [K in keyof T]: Request } {
  const holders = tenants.map(holder);
  for (const h of holders) slots.acquire(h);
  return holders as { [K in keyof T]: Request };
}

/** Lets every settled promise's callbacks run (no clock involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('tenantShare', () => {
  it.each([
    [512, 128],
    [10, 2],
    [8, 2],
    [7, 1],
    [4, 1],
    [3, 1],
    [1, 1],
  ])('omitted: a quarter of %i connections, at least 1 → %i', (maxConnections, share) => {
    expect(tenantShare({ maxConnections })).toBe(share);
  });

  it('takes a configured share as it is', () => {
    expect(tenantShare({ maxConnections: 512, maxPerTenant: 1 })).toBe(1);
    expect(tenantShare({ maxConnections: 512, maxPerTenant: 512 })).toBe(512);
    expect(tenantShare({ maxConnections: 512, maxPerTenant: undefined })).toBe(128);
  });
});

describe('acquire', () => {
  it('holds up to maxConnections across tenants, then puts the rest in line', () => {
    const { slots } = setup({ maxConnections: 2, maxPerTenant: 2 });
    const [a, b, c] = [holder('acme'), holder('globex'), holder('initech')];
    expect(slots.acquire(a)).toBe('held');
    expect(slots.acquire(b)).toBe('held');
    expect(slots.acquire(c)).toBe('waiting');
    expect([a.slot, b.slot, c.slot]).toEqual(['held', 'held', 'waiting']);
  });

  it("refuses a tenant past its share at once, leaving the holder's state untouched", () => {
    const { slots } = setup({ maxConnections: 10, maxPerTenant: 2 });
    expect(slots.acquire(holder('acme'))).toBe('held');
    expect(slots.acquire(holder('acme'))).toBe('held');
    const third = holder('acme');
    expect(slots.acquire(third)).toBe('refused');
    expect(third.slot).toBe('none');
    // Other tenants are not affected by acme's share being taken.
    expect(slots.acquire(holder('globex'))).toBe('held');
  });

  it('counts waiting holders against the share, not only held ones', () => {
    const { slots } = setup({ maxConnections: 1, maxPerTenant: 2 });
    expect(slots.acquire(holder('globex'))).toBe('held');
    expect(slots.acquire(holder('acme'))).toBe('waiting');
    expect(slots.acquire(holder('acme'))).toBe('waiting');
    expect(slots.acquire(holder('acme'))).toBe('refused');
    // Refusal is per tenant: the line itself is not full.
    expect(slots.acquire(holder('initech'))).toBe('waiting');
  });

  it('applies the default share when none is configured', () => {
    const { slots } = setup({ maxConnections: 8 });
    expect(slots.acquire(holder('acme'))).toBe('held');
    expect(slots.acquire(holder('acme'))).toBe('held');
    expect(slots.acquire(holder('acme'))).toBe('refused');
  });

  it('gives a share back once a holder leaves', () => {
    const { slots } = setup({ maxConnections: 10, maxPerTenant: 1 });
    const first = holder('acme');
    expect(slots.acquire(first)).toBe('held');
    expect(slots.acquire(holder('acme'))).toBe('refused');
    slots.leave(first);
    expect(slots.acquire(holder('acme'))).toBe('held');
  });

  it('a refused holder takes no slot: it cannot free one by leaving', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const held = holder('acme');
    const refused = holder('acme');
    expect(slots.acquire(held)).toBe('held');
    expect(slots.acquire(refused)).toBe('refused');
    const waiting = holder('globex');
    expect(slots.acquire(waiting)).toBe('waiting');
    slots.leave(refused);
    expect(granted).toEqual([]);
    expect(waiting.slot).toBe('waiting');
    expect(held.slot).toBe('held');
  });
});

describe('leave', () => {
  it('frees a held slot for the next acquire when nobody waits', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const a = holder('acme');
    slots.acquire(a);
    slots.leave(a);
    expect(a.slot).toBe('none');
    expect(slots.acquire(holder('globex'))).toBe('held');
    expect(granted).toEqual([]);
  });

  it('grants freed slots in the order holders started waiting, whatever their tenant', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 2 });
    const first = holder('acme');
    slots.acquire(first);
    const second = holder('globex');
    const third = holder('acme');
    const fourth = holder('initech');
    const fifth = holder('globex');
    const line = [second, third, fourth, fifth];
    for (const h of line) expect(slots.acquire(h)).toBe('waiting');

    slots.leave(first);
    expect(granted).toEqual([second]);
    slots.leave(second);
    expect(granted).toEqual([second, third]);
    slots.leave(third);
    slots.leave(fourth);
    expect(granted).toEqual(line);
    expect(line.map((h) => h.slot)).toEqual(['none', 'none', 'none', 'held']);
  });

  it('calls granted synchronously, with the holder already marked held', () => {
    const seen: string[] = [];
    const slots = createTenantSlots<Request>({ maxConnections: 1, maxPerTenant: 1 }, (h) =>
      seen.push(`${h.tenant}:${h.slot}`),
    );
    const [a] = inLine(slots, 'acme', 'globex');
    slots.leave(a);
    expect(seen).toEqual(['globex:held']);
  });

  it('passes the slot on rather than freeing it: a newcomer still waits behind the line', () => {
    const { slots } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const [a, b] = inLine(slots, 'acme', 'globex');
    slots.leave(a);
    expect(b.slot).toBe('held');
    expect(slots.acquire(holder('initech'))).toBe('waiting');
  });

  it('a holder that gives up waiting leaves the line: it is never granted, the next one is', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const [a, quitter, patient] = inLine(slots, 'acme', 'globex', 'initech');

    slots.leave(quitter);
    expect(quitter.slot).toBe('none');
    // Giving up a place in line frees no slot.
    expect(granted).toEqual([]);
    expect(a.slot).toBe('held');

    slots.leave(a);
    expect(granted).toEqual([patient]);
    expect(quitter.slot).toBe('none');
  });

  it("gives an abandoned waiter's share back to its tenant", () => {
    const { slots } = setup({ maxConnections: 1, maxPerTenant: 1 });
    slots.acquire(holder('globex'));
    const quitter = holder('acme');
    expect(slots.acquire(quitter)).toBe('waiting');
    expect(slots.acquire(holder('acme'))).toBe('refused');
    slots.leave(quitter);
    expect(slots.acquire(holder('acme'))).toBe('waiting');
  });

  it('is idempotent for a held slot: leaving twice frees one slot, not two', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const [a, b, c] = inLine(slots, 'acme', 'globex', 'initech');
    slots.leave(a);
    slots.leave(a);
    expect(granted).toEqual([b]);
    expect(c.slot).toBe('waiting');
  });

  it("is idempotent for a place in line: leaving twice removes no one else's", () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 2 });
    const a = holder('acme');
    const quitter = holder('globex');
    const patient = holder('globex');
    slots.acquire(a);
    slots.acquire(quitter);
    slots.acquire(patient);
    slots.leave(quitter);
    slots.leave(quitter);
    slots.leave(a);
    expect(granted).toEqual([patient]);
    // globex's count went down once, for the quitter only: one more fits, not two.
    expect(slots.acquire(holder('globex'))).toBe('waiting');
    expect(slots.acquire(holder('globex'))).toBe('refused');
  });

  it('ignores a holder that never asked', () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const a = holder('acme');
    const b = holder('globex');
    slots.acquire(a);
    slots.acquire(b);
    slots.leave(holder('acme'));
    expect(granted).toEqual([]);
    expect(a.slot).toBe('held');
    expect(b.slot).toBe('waiting');
    // acme's share is still taken by `a`.
    expect(slots.acquire(holder('acme'))).toBe('refused');
  });
});

describe('drained', () => {
  it('resolves at once when nothing is held', async () => {
    const { slots } = setup({ maxConnections: 2 });
    await expect(slots.drained()).resolves.toBeUndefined();
  });

  it('waits for the last held slot to be given back', async () => {
    const { slots } = setup({ maxConnections: 2, maxPerTenant: 2 });
    const a = holder('acme');
    const b = holder('globex');
    slots.acquire(a);
    slots.acquire(b);
    let done = false;
    void slots.drained().then(() => (done = true));

    await settle();
    expect(done).toBe(false);
    slots.leave(a);
    await settle();
    expect(done).toBe(false);
    slots.leave(b);
    await settle();
    expect(done).toBe(true);
  });

  it('stays pending while a freed slot passes to someone in line', async () => {
    const { slots } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const a = holder('acme');
    const b = holder('globex');
    slots.acquire(a);
    slots.acquire(b);
    let done = false;
    void slots.drained().then(() => (done = true));

    slots.leave(a);
    await settle();
    expect(b.slot).toBe('held');
    expect(done).toBe(false);
    slots.leave(b);
    await settle();
    expect(done).toBe(true);
  });

  it('resolves when the holder leaves even if a waiter gave up first', async () => {
    const { slots, granted } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const a = holder('acme');
    const quitter = holder('globex');
    slots.acquire(a);
    slots.acquire(quitter);
    let done = false;
    void slots.drained().then(() => (done = true));

    slots.leave(quitter);
    await settle();
    expect(done).toBe(false);
    slots.leave(a);
    await settle();
    expect(done).toBe(true);
    expect(granted).toEqual([]);
  });

  it('resolves every caller, and works again once the slots are busy again', async () => {
    const { slots } = setup({ maxConnections: 1, maxPerTenant: 1 });
    const a = holder('acme');
    slots.acquire(a);
    const results: string[] = [];
    void slots.drained().then(() => results.push('first'));
    void slots.drained().then(() => results.push('second'));
    slots.leave(a);
    await settle();
    expect(results).toEqual(['first', 'second']);

    const b = holder('acme');
    slots.acquire(b);
    let again = false;
    void slots.drained().then(() => (again = true));
    await settle();
    expect(again).toBe(false);
    // The earlier callers are not called a second time.
    slots.leave(b);
    await settle();
    expect(again).toBe(true);
    expect(results).toEqual(['first', 'second']);
  });
});
