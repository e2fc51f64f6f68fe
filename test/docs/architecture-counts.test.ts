/**
 * Issue 43: docs/architecture.md says how many suites start a redis-server;
 * the count stays true and at most 30, and every suite that imports a way to
 * start one is named `x.redis.test.ts`, so the count is the names'.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
/** The support modules that start a redis-server, and the Redis identity fixture. */
const REDIS_STARTER =
  /support\/(redis-server|redis-topologies|two-instances)\.js'|\/harness\.js'|\bstartIdentityFixture\b/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

it('the suites that start a redis-server are named for it, as many as the architecture page states, at most 30', () => {
  const self = relative(ROOT, import.meta.filename);
  const files = testFiles(join(ROOT, 'test')).filter((file) => file !== self);
  const named = files.filter((file) => file.endsWith('.redis.test.ts'));
  const starting = files.filter((file) =>
    REDIS_STARTER.test(readFileSync(join(ROOT, file), 'utf8')),
  );
  expect(starting.filter((file) => !named.includes(file))).toEqual([]);
  expect(named.length).toBeGreaterThan(0);
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  expect(/^(\d+) of the suites start a redis-server/m.exec(page)?.[1]).toBe(String(named.length));
  expect(named.length).toBeLessThanOrEqual(30);
});
