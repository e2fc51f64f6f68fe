/**
 * The gateway's one cleanup list. Each builder's undo joins it as the part is
 * built; the list runs newest first, on a start that fails at any step and on
 * close alike, so whatever was opened is closed, in the reverse order of its
 * opening. Every undo runs even when one before it fails.
 */

/** What closes one built part: its sockets, threads, timers or connections. */
export type Undo = () => unknown;

export interface Cleanup {
  /** Adds `undo` for the part `name`: it runs before everything added earlier. */
  add(name: string, undo: Undo): void;
  /**
   * Runs every undo once, newest first (a second call waits for the first
   * run); rejects with the first failure once all have run.
   */
  run(): Promise<void>;
}

export function createCleanup(): Cleanup {
  const entries: { name: string; undo: Undo }[] = [];
  let running: Promise<void> | undefined;
  const runAll = async (): Promise<void> => {
    let failure: { err: unknown } | undefined;
    for (const { undo } of entries.splice(0).reverse()) {
      try {
        await undo();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure !== undefined) throw failure.err;
  };
  return {
    add(name, undo) {
      entries.push({ name, undo });
    },
    run() {
      running ??= runAll();
      return running;
    },
  };
}
