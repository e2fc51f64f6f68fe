/**
 * Issue 43: docs/architecture.md says how many suites start a redis-server
 * and gives the grep that counts them; the count stays true, and at most 30.
 * The pattern is read from the page, so this file starts nothing by its count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

it('the number of suites that start a redis-server is the one the architecture page states, at most 30', () => {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const stated = /^(\d+) of the suites start a redis-server/m.exec(page)?.[1];
  const grep = /grep -rlE "([^"]+)" test --include=\*\.test\.ts/.exec(page)?.[1];
  expect(grep).toBeDefined();
  const startsRedis = new RegExp(grep as string);
  const counted = testFiles(join(ROOT, 'test')).filter((file) =>
    startsRedis.test(readFileSync(join(ROOT, file), 'utf8')),
  );
  expect(counted.length).toBeGreaterThan(0);
  expect(stated).toBe(String(counted.length));
  expect(counted.length).toBeLessThanOrEqual(30);
});
