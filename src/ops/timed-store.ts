/**
 * The store with every call timed (`tenant_gateway_store_command_duration_seconds`)
 * and, inside a traced request, a span each.
 * A wrapper at the edge, so no backend knows about metrics: each method
 * that returns a promise, of the store or of one of its slices
 * (`store.users.getUser`), is timed from call to settlement, by its name
 * (a fixed set: the slices' operation names, unique across slices, and the
 * store's own) and whether it answered.
 */
import { performance } from 'node:perf_hooks';
import type { Store } from '../store/types.js';

export type StoreCallObserver = (operation: string, seconds: number, ok: boolean) => void;

/** Starts a span for a step of the active request; undefined when untraced. */
export type TraceStep = (name: string) => ((error?: unknown) => void) | undefined;

export function timeStore(store: Store, observe: StoreCallObserver, step?: TraceStep): Store {
  return timed(store, observe, step, true);
}

/** `target` with its promise-returning methods timed, and (`slices`) each object it holds likewise. */
function timed<T extends object>(
  target: T,
  observe: StoreCallObserver,
  step: TraceStep | undefined,
  slices: boolean,
): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(inner, name, receiver) {
      const value: unknown = Reflect.get(inner, name, receiver);
      if (typeof name !== 'string') return value;
      const isSlice = slices && typeof value === 'object' && value !== null;
      if (typeof value !== 'function' && !isSlice) return value;
      let answer = wrapped.get(name);
      if (answer === undefined) {
        answer = isSlice
          ? timed(value as object, observe, step, false)
          : timedMethod(inner, name, value as (...args: unknown[]) => unknown, observe, step);
        wrapped.set(name, answer);
      }
      return answer;
    },
  });
}

/** The method of `target` timed by its name from call to settlement, when it answers a promise. */
function timedMethod(
  target: object,
  name: string,
  method: (...args: unknown[]) => unknown,
  observe: StoreCallObserver,
  step: TraceStep | undefined,
): (...args: unknown[]) => unknown {
  return function (this: unknown, ...args: unknown[]) {
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
}
