/** Loads what a page shows, with its loading and error states, and a way to load it again. */
import { useCallback, useEffect, useState } from 'preact/hooks';

export type Loaded<T> =
  { state: 'loading' } | { state: 'failed'; error: unknown } | { state: 'ready'; value: T };

export function useLoad<T>(
  load: () => Promise<T>,
  keys: readonly unknown[],
): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => live && setLoaded({ state: 'ready', value }),
      (error: unknown) => live && setLoaded({ state: 'failed', error }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...keys, round]);
  const again = useCallback(() => setRound((r) => r + 1), []);
  return [loaded, again];
}
