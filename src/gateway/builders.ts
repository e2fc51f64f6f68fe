/**
 * Running the composition root's named builders in order. A builder returns
 * the part it built and, when the part holds anything open, its undo, which
 * joins the one cleanup list (`cleanup.ts`). When a builder throws, the list
 * runs (newest first) before the failure is thrown on: a failed start leaves
 * no socket, thread, timer or connection open.
 */
import type { Cleanup, Undo } from './cleanup.js';

/** What a builder returns: the part, and what closes it (none when it holds nothing open). */
export interface Built<T> {
  part: T;
  undo?: Undo;
}

/** A part that holds nothing open. */
export const built = <T>(part: T, undo?: Undo): Built<T> =>
  undo === undefined ? { part } : { part, undo };

/**
 * Called before each step with its name; throwing fails the start at that
 * step. For tests (a failed start, step by step); a gateway passes none.
 */
export type BeforeStep = (name: string) => void | Promise<void>;

/** Runs one named builder: its part is returned, its undo added to the cleanup list. */
export type Step = <T>(name: string, build: () => Built<T> | Promise<Built<T>>) => Promise<T>;

export function stepsOn(cleanup: Cleanup, beforeStep?: BeforeStep): Step {
  return async (name, build) => {
    try {
      await beforeStep?.(name);
      const { part, undo } = await build();
      if (undo !== undefined) cleanup.add(name, undo);
      return part;
    } catch (err) {
      await cleanup.run().catch(() => {
        // The start's own failure is the one to report.
      });
      throw err;
    }
  };
}
