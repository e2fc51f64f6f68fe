import { defineConfig } from 'vitest/config';
import { LongestFirst } from './longest-first.js';

// Two cores on the CI machine, four workers (forks): most files spend their
// time waiting on the processes they start (redis-server, gateways, nginx,
// Chromium), so more workers than cores fill them (three left ~25 % of the
// two cores idle: vitest 314 s; four: 260 s, on the idle machine). Each
// worker picks Sentinel and Cluster ports in a slice of its own
// (support/ports.ts). A worker runs its files one
// after another on one module graph (isolate: false): importing the sources
// again for each of ~160 files took 184 s of worker time, now ~26 s. Each file
// still closes what it started in its own hooks (its redis-server, gateways,
// upstreams), so nothing outlives it. Issue 43: vitest 483 s → 247 s here.
// The longest files start first (longest-first.ts), so the run does not end
// on one worker finishing a long suite while the others idle.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['bench/**', 'node_modules/**'],
    globalSetup: ['test/temp-root.ts', 'test/console-assets.ts'],
    pool: 'forks',
    maxWorkers: 4,
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ['default'],
    sequence: { sequencer: LongestFirst },
  },
});
