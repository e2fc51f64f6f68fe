/**
 * What a page's buttons do: run the change, say what it did (or the error
 * as a sentence), and load the page's data again after it.
 */
import { useState } from 'preact/hooks';

export interface Action {
  /** Runs `work`; its result is the sentence shown when it succeeded. */
  run: (work: () => Promise<string>) => Promise<void>;
  error: unknown;
  done: string | undefined;
}

export function useAction(again: () => void): Action {
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  const run = async (work: () => Promise<string>) => {
    setError(undefined);
    setDone(undefined);
    try {
      setDone(await work());
      again();
    } catch (err) {
      setError(err);
    }
  };
  return { run, error, done };
}
