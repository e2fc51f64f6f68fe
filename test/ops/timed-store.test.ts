/**
 * The timed store (`src/ops/timed-store.ts`) times the slices' operations by
 * their names, and the store's own, with a span each inside a traced request.
 */
import { describe, expect, it } from 'vitest';
import { timeStore } from '../../src/ops/timed-store.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

describe('timeStore', () => {
  it('times an operation of a slice and of the store, by name and outcome, with a span each', async () => {
    const calls: [string, boolean][] = [];
    const spans: string[] = [];
    const inner = createMemoryStore();
    const store = timeStore(
      inner,
      (operation, seconds, ok) => {
        expect(seconds).toBeGreaterThanOrEqual(0);
        calls.push([operation, ok]);
      },
      (name) => {
        spans.push(name);
        return undefined;
      },
    );
    expect(await store.users.getUser('u-none')).toBeNull();
    await store.ping();
    await inner.close();
    await expect(store.memberships.listMembers('acme')).rejects.toThrow();
    expect(calls).toEqual([
      ['getUser', true],
      ['ping', true],
      ['listMembers', false],
    ]);
    expect(spans).toEqual(['store.getUser', 'store.ping', 'store.listMembers']);
    expect(store.users).toBe(store.users);
  });
});
