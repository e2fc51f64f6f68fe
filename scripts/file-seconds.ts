/**
 * Writes test/file-seconds.json, the order vitest starts the test files in
 * (test/longest-first.ts), from the durations vitest keeps of the last run
 * of each file (its results cache, node_modules/.vite/vitest/…/results.json:
 * a file's whole time, its hooks included). After a whole run on the 2-core
 * machine:
 *
 *   npx vitest run --config test/vitest.config.ts
 *   npx tsx scripts/file-seconds.ts [results.json]
 *
 * Slowest first, in seconds; only files that still exist. Run it when files
 * were added or became much slower or faster; a file the table does not list
 * is placed by its size.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = resolve(ROOT, 'test/file-seconds.json');
const CACHE = join(ROOT, 'node_modules/.vite/vitest');

interface Results {
  results: [string, { duration: number; failed: boolean }][];
}

function cacheFile(): string {
  const found = existsSync(CACHE)
    ? readdirSync(CACHE)
        .map((dir) => join(CACHE, dir, 'results.json'))
        .filter((file) => existsSync(file))
    : [];
  if (found.length !== 1)
    throw new Error(`name the results file: ${found.length} found under ${CACHE}`);
  return found[0] as string;
}

function main(path = cacheFile()): void {
  const { results } = JSON.parse(readFileSync(path, 'utf8')) as Results;
  const seconds = results
    .map(([key, result]) => ({
      // Keys are `<project>:<path from the root>`; this config has one unnamed project.
      path: key.slice(key.indexOf(':') + 1),
      seconds: Math.round(result.duration / 100) / 10,
    }))
    .filter((file) => file.path.endsWith('.test.ts') && existsSync(join(ROOT, file.path)))
    .sort((a, b) => b.seconds - a.seconds || a.path.localeCompare(b.path));
  const table = Object.fromEntries(seconds.map((file) => [file.path, file.seconds]));
  writeFileSync(OUT, `${JSON.stringify(table, null, 2)}\n`);
  console.log(`${OUT}: ${seconds.length} files`);
}

main(process.argv[2]);
