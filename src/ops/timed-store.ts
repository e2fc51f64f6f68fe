/**
 * The store with every call timed (`tenant_gateway_store_command_duration_seconds`)
 * and, inside a traced request, a span each.
 * A wrapper at the edge, so no backend knows about metrics: each method
 * that returns a promise is timed from call to settlement, by its name
 * (a fixed set: the `Store` interface's methods) and whether it answered.
 */
import { performance } from 'node:perf_hooks';
import type { Store } from '../store/types.js';

export type StoreCallObserver = (operation: string, seconds: number, ok: boolean) => void;

/** Starts a span for a step of the active request; undefined when untraced. */
export type TraceStep = (name: string) => ((error?: unknown) => void) | undefined;

export function timeStore(store: Store, observe: StoreCallObserver, step?: TraceStep): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      let timed = wrapped.get(name);
      if (timed === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        timed = function (this: unknown, ...args: unknown[]) {
          const started = performance.now();
          const result = method.apply(target, args);
          if (!(result instanceof Promise)) return result;
          const end = step?.(`store.${name}`);
          const seconds = () => (performance.now() - started) / 1000;
          return result.then(
            (answer) => {
              observe(name, seconds(), true);
              end?.();
              return answer;
            },
            (err: unknown) => {
              observe(name, seconds(), false);
              end?.(err);
              throw err;
            },
          );
        };
        wrapped.set(name, timed);
      }
      return timed;
    },
  });
}
