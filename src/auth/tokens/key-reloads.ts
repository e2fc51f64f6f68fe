/**
 * Re-reading the key directory for a token whose `kid` is unknown. Anyone can
 * send such a token, so: at most one read per interval, shared by every
 * request that meets an unknown kid meanwhile (a token of a key just added
 * waits for the read under way instead of being refused), and what was
 * verified before is forgotten only for keys that were removed or replaced.
 */
import { isSameKey, type KeySet } from './keys.js';
import type { KeyRing } from './tokens.js';

export interface KeyReloadOptions {
  /** Least time (ms) between two reads. */
  intervalMs: number;
  /** Told of the new key set when a read removed or replaced a key. */
  onKeysRemoved(keys: KeySet): void;
  log?: { warn(obj: object, msg: string): void } | undefined;
}

export class KeyReloads {
  private readonly keyring: KeyRing;
  private readonly options: KeyReloadOptions;
  private lastReload = -Infinity;
  private reloading: Promise<boolean> | undefined = undefined;

  constructor(keyring: KeyRing, options: KeyReloadOptions) {
    this.keyring = keyring;
    this.options = options;
  }

  /** @returns whether a read completed, so that a retry may succeed */
  reload(): Promise<boolean> {
    if (this.reloading !== undefined) return this.reloading;
    const { keyring, options } = this;
    const reload = keyring.reload;
    if (reload === undefined || Date.now() - this.lastReload < options.intervalMs)
      return Promise.resolve(false);
    this.lastReload = Date.now();
    const before = keyring.current;
    this.reloading = reload()
      .then(
        () => {
          if (!keepsEveryKey(before, keyring.current)) options.onKeysRemoved(keyring.current);
          return true;
        },
        (err: unknown) => {
          // A broken key directory must not turn a refusal into a 500: keep the keys we have.
          options.log?.warn({ err }, 'key directory reload failed; keeping the loaded keys');
          return false;
        },
      )
      .finally(() => {
        this.reloading = undefined;
      });
    return this.reloading;
  }
}

/** Whether every key of `before` is still in `after`, unchanged (keys may have been added). */
function keepsEveryKey(before: KeySet, after: KeySet): boolean {
  for (const key of before.byKid.values())
    if (!isSameKey(key, after.byKid.get(key.kid))) return false;
  return true;
}
