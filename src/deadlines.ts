/**
 * Deadlines of the requests in flight on one coarse timing wheel instead of a
 * timer each: one interval ticks while anything is pending, and a request
 * costs a set insert when it starts and a set delete when it ends. A deadline
 * fires no earlier than its time and at most one tick (10 ms) later.
 *
 * Pushing a deadline back (a request body that moved) only writes the new
 * time on the entry; the wheel moves it when its old slot comes round, so a
 * body arriving in thousands of chunks costs an assignment per chunk.
 */

/** What the wheel schedules: the fields are the wheel's own. */
export interface Expiring {
  /** When it expires (the clock's milliseconds); 0: not scheduled. */
  deadlineAt: number;
  /** The slot holding it, while scheduled. */
  deadlineSlot: Set<Expiring> | undefined;
}

export interface DeadlineWheelOptions {
  tickMs?: number;
  /** Slots in one turn of the wheel; a deadline further away waits for its turn. */
  slots?: number;
  /** Milliseconds, monotonic. */
  now?: () => number;
}

export class DeadlineWheel<T extends Expiring> {
  readonly #slots: Set<T>[];
  readonly #tickMs: number;
  readonly #now: () => number;
  readonly #expire: (item: T) => void;
  /** The last tick whose slot has been handled. */
  #handled: number;
  #pending = 0;
  #timer: NodeJS.Timeout | undefined = undefined;

  constructor(expire: (item: T) => void, options: DeadlineWheelOptions = {}) {
    this.#expire = expire;
    this.#tickMs = options.tickMs ?? 10;
    this.#now = options.now ?? (() => performance.now());
    this.#slots = Array.from({ length: options.slots ?? 1024 }, () => new Set<T>());
    this.#handled = Math.floor(this.#now() / this.#tickMs);
  }

  /** Expires `item` `ms` from now (replacing any deadline it had). */
  schedule(item: T, ms: number): void {
    this.cancel(item);
    item.deadlineAt = this.#now() + ms;
    this.#place(item);
    this.#pending++;
    if (this.#timer === undefined) {
      this.#handled = Math.floor(this.#now() / this.#tickMs);
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      this.#timer.unref();
    }
  }

  /** Moves a scheduled deadline to `ms` from now; nothing for an item not scheduled. */
  pushBack(item: T, ms: number): void {
    if (item.deadlineSlot !== undefined) item.deadlineAt = this.#now() + ms;
  }

  cancel(item: T): void {
    const slot = item.deadlineSlot;
    if (slot === undefined) return;
    slot.delete(item);
    item.deadlineSlot = undefined;
    item.deadlineAt = 0;
    if (--this.#pending === 0) this.#stop();
  }

  /** Deadlines waiting. */
  get pending(): number {
    return this.#pending;
  }

  #place(item: T): void {
    const slot = this.#slotOf(item.deadlineAt);
    slot.add(item);
    item.deadlineSlot = slot as Set<Expiring>;
  }

  #slotOf(deadlineAt: number): Set<T> {
    // Never a slot already handled: a deadline due now fires on the next tick.
    const tick = Math.max(Math.ceil(deadlineAt / this.#tickMs), this.#handled + 1);
    return this.#slots[tick % this.#slots.length] as Set<T>;
  }

  #tick(): void {
    const now = this.#now();
    const current = Math.floor(now / this.#tickMs);
    // A late tick (a busy event loop) handles every slot it skipped, once.
    const from = Math.max(this.#handled + 1, current - this.#slots.length + 1);
    this.#handled = current;
    for (let tick = from; tick <= current; tick++) {
      const slot = this.#slots[tick % this.#slots.length] as Set<T>;
      for (const item of slot) {
        if (item.deadlineAt > now) {
          // Pushed back, or due in a later turn of the wheel: to its slot
          // (this one again for a later turn: left where it is).
          const target = this.#slotOf(item.deadlineAt);
          if (target !== slot) {
            slot.delete(item);
            target.add(item);
            item.deadlineSlot = target as Set<Expiring>;
          }
          continue;
        }
        slot.delete(item);
        item.deadlineSlot = undefined;
        item.deadlineAt = 0;
        this.#pending--;
        this.#expire(item);
      }
    }
    if (this.#pending === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
