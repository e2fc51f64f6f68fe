import { defineConfig } from 'vitest/config';

// Two cores on the CI machine: two workers, each test file in its own fork so
// a file's redis-server and gateway processes never outlive it.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['bench/**', 'node_modules/**'],
    globalSetup: ['test/temp-root.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default'],
  },
});
