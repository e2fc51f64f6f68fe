/**
 * Something a whole suite (or describe block) shares, started in its
 * `beforeAll` and stopped in its `afterAll`: a redis topology, a browser.
 */
import { afterAll, beforeAll } from 'vitest';

/**
 * Registers the hooks that start `start`'s resource and stop it with `stop`;
 * @returns a getter for the resource, to call inside hooks and tests.
 */
export function suiteResource<T>(
  start: () => Promise<T>,
  stop: (resource: T) => Promise<void>,
  timeoutMs = 60_000,
): () => T {
  let resource: T | undefined;
  beforeAll(async () => {
    resource = await start();
  }, timeoutMs);
  afterAll(async () => {
    if (resource !== undefined) await stop(resource);
  });
  return () => {
    if (resource === undefined) throw new Error('the suite resource is read outside its suite');
    return resource;
  };
}
