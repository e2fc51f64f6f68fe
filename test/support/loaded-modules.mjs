// Preloaded with `node --import` (NODE_OPTIONS) by the "startup" test of test/cli/cli.redis.test.ts:
// appends the URL of each module the process loads through the ES module
// loader (every `import`, and the CommonJS entries it reaches) to the file
// $TG_LOADED_MODULES names, one a line. Plain JavaScript so that Node runs it as is.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// Once, from the main thread: the loader's own thread runs this preload too.
if (isMainThread) register(import.meta.url);

/** The `load` hook, called in the loader's thread. */
export async function load(url, context, nextLoad) {
  appendFileSync(process.env.TG_LOADED_MODULES, `${url}\n`);
  return nextLoad(url, context);
}
