/**
 * Vitest global setup: every temporary file and directory of the run —
 * made by tests, fixtures, the gateways and servers they start — goes under
 * one directory of its own (TMPDIR, which `os.tmpdir()` reads and every
 * forked worker and child process inherits), removed when the run ends. A
 * test that forgets to clean up leaves nothing behind in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'tg-test-'));
  process.env['TMPDIR'] = root;
  return () => rmSync(root, { recursive: true, force: true });
}
