/**
 * `deadlines.ts` promises: a deadline fires once, never before its time and
 * at most one tick after it; a cancelled one never fires; a pushed-back one
 * fires at its new time; deadlines further away than one turn of the wheel
 * wait for their turn; a late tick fires everything that came due; and the
 * one interval runs only while something is pending.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineWheel, type Expiring } from '../src/deadlines.js';

interface Item extends Expiring {
  name: string;
}
const item = (name: string): Item => ({ name, deadlineAt: 0, deadlineSlot: undefined });

let fired: { name: string; at: number }[];
let wheel: DeadlineWheel<Item>;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  fired = [];
  wheel = new DeadlineWheel<Item>((i) => fired.push({ name: i.name, at: Date.now() }), {
    tickMs: 10,
    slots: 8,
    now: () => Date.now(),
  });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('DeadlineWheel', () => {
  it('fires once, not before its time and within one tick after it', () => {
    const start = Date.now();
    wheel.schedule(item('a'), 35);
    vi.advanceTimersByTime(34);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(fired.map((f) => f.name)).toEqual(['a']);
    const late = (fired[0]?.at as number) - start;
    expect(late).toBeGreaterThanOrEqual(35);
    expect(late).toBeLessThanOrEqual(45);
  });

  it('never fires a cancelled deadline, and stops its interval when nothing is pending', () => {
    const a = item('a');
    wheel.schedule(a, 20);
    expect(vi.getTimerCount()).toBe(1);
    wheel.cancel(a);
    wheel.cancel(a); // twice: nothing more
    expect(wheel.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(500);
    expect(fired).toEqual([]);
  });

  it('fires a pushed-back deadline at its new time', () => {
    const start = Date.now();
    const a = item('a');
    wheel.schedule(a, 30);
    vi.advanceTimersByTime(25);
    wheel.pushBack(a, 30); // due at 55 now
    vi.advanceTimersByTime(25);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    const at = (fired[0]?.at as number) - start;
    expect(at).toBeGreaterThanOrEqual(55);
    expect(at).toBeLessThanOrEqual(65);
  });

  it('keeps deadlines several turns of the wheel away until their time', () => {
    const start = Date.now();
    // One turn is 8 slots × 10 ms = 80 ms.
    wheel.schedule(item('far'), 250);
    wheel.schedule(item('exactly two turns'), 160);
    vi.advanceTimersByTime(159);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(fired.map((f) => [f.name, f.at - start])).toEqual([
      ['exactly two turns', 160],
      ['far', 250],
    ]);
  });

  it('fires every deadline exactly once, in time order by tick', () => {
    const items = Array.from({ length: 200 }, (_, i) => item(`i${i}`));
    items.forEach((it, i) => wheel.schedule(it, (i * 7) % 300));
    vi.advanceTimersByTime(1000);
    expect(fired).toHaveLength(200);
    expect(new Set(fired.map((f) => f.name)).size).toBe(200);
    const ats = fired.map((f) => f.at);
    expect([...ats].sort((x, y) => x - y)).toEqual(ats);
    expect(wheel.pending).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a late tick (a blocked event loop) fires everything that came due, once', () => {
    wheel.schedule(item('a'), 20);
    wheel.schedule(item('b'), 50);
    wheel.schedule(item('c'), 500);
    vi.setSystemTime(Date.now() + 300); // the clock moves, no tick ran
    vi.advanceTimersByTime(10);
    expect(fired.map((f) => f.name)).toEqual(['a', 'b']);
    vi.advanceTimersByTime(300);
    expect(fired.map((f) => f.name)).toEqual(['a', 'b', 'c']);
  });

  it('scheduling again replaces the deadline', () => {
    const a = item('a');
    wheel.schedule(a, 20);
    wheel.schedule(a, 100);
    expect(wheel.pending).toBe(1);
    vi.advanceTimersByTime(90);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(50);
    expect(fired).toHaveLength(1);
  });
});
