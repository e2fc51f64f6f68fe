/**
 * The composition root's cleanup list and step runner (src/gateway/cleanup.ts,
 * builders.ts): undos run newest first, all of them even when one fails, once;
 * a step that throws runs the list and throws its own failure on.
 */
import { describe, expect, it } from 'vitest';
import { built, stepsOn } from '../../src/gateway/builders.js';
import { createCleanup } from '../../src/gateway/cleanup.js';

describe('cleanup list', () => {
  it('runs every undo once, newest first, and rejects with the first failure after all ran', async () => {
    const ran: string[] = [];
    const cleanup = createCleanup();
    cleanup.add('a', () => void ran.push('a'));
    cleanup.add('b', () => {
      ran.push('b');
      throw new Error('b failed');
    });
    cleanup.add('c', async () => {
      ran.push('c');
      throw new Error('c failed');
    });
    await expect(cleanup.run()).rejects.toThrow('c failed');
    expect(ran).toEqual(['c', 'b', 'a']);
    // A second run (close after a failed start) waits for the first, runs nothing again.
    await expect(cleanup.run()).rejects.toThrow('c failed');
    expect(ran).toEqual(['c', 'b', 'a']);
  });
});

describe('named steps', () => {
  it('a step that throws runs the undos of the steps before it, then throws its own failure', async () => {
    const ran: string[] = [];
    const cleanup = createCleanup();
    const step = stepsOn(cleanup);
    await step('one', () => built(1, () => void ran.push('one')));
    await step('two', () => built(2)); // holds nothing open
    await step('three', async () => built(3, () => void ran.push('three')));
    await expect(
      step('four', () => {
        throw new Error('four failed');
      }),
    ).rejects.toThrow('four failed');
    expect(ran).toEqual(['three', 'one']);
  });

  it('beforeStep sees each name in order and fails the start where it throws', async () => {
    const seen: string[] = [];
    const ran: string[] = [];
    const step = stepsOn(createCleanup(), (name) => {
      seen.push(name);
      if (name === 'second') throw new Error('fault');
    });
    await step('first', () => built('x', () => void ran.push('first')));
    let builtSecond = false;
    await expect(
      step('second', () => {
        builtSecond = true;
        return built('y');
      }),
    ).rejects.toThrow('fault');
    expect({ seen, builtSecond, ran }).toEqual({
      seen: ['first', 'second'],
      builtSecond: false,
      ran: ['first'],
    });
  });

  it('the undo of a failing cleanup does not hide the failure of the start', async () => {
    const cleanup = createCleanup();
    const step = stepsOn(cleanup);
    await step('opened', () =>
      built(0, () => {
        throw new Error('undo failed');
      }),
    );
    await expect(
      step('next', () => {
        throw new Error('start failed');
      }),
    ).rejects.toThrow('start failed');
  });
});
