import { defineConfig } from 'vitest/config';

// Two cores on the CI machine: two workers (forks). A worker runs its files
// one after another on one module graph (isolate: false): importing the
// gateway's sources again for each of ~160 files cost more than half of the
// suite's time. Each file still closes what it started in its own hooks
// (its redis-server, gateways, upstreams), so nothing outlives it.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['bench/**', 'node_modules/**'],
    globalSetup: ['test/temp-root.ts'],
    pool: 'forks',
    maxWorkers: 2,
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
