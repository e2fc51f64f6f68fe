/**
 * Vitest global setup: every temporary file and directory of the run —
 * made by tests, fixtures, the gateways and servers they start — goes under
 * one directory of its own (TMPDIR, which `os.tmpdir()` reads and every
 * forked worker and child process inherits), removed when the run ends. A
 * test that forgets to clean up leaves nothing behind in /tmp. A run that
 * was interrupted (Ctrl-C skips the teardown) leaves its directory, which
 * the next run removes: it holds the pid of the run that made it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'tg-test-';
const OWNER_FILE = 'owner.pid';
/** A directory without its owner file may be one another run has only just made. */
const UNOWNED_GRACE_MS = 60_000;

export default function setup(): () => void {
  const base = tmpdir();
  removeAbandoned(base);
  const root = mkdtempSync(join(base, PREFIX));
  writeFileSync(join(root, OWNER_FILE), String(process.pid));
  process.env['TMPDIR'] = root;
  return () => rmSync(root, { recursive: true, force: true });
}

/** The directories of earlier runs whose process is gone (another live run's stays). */
function removeAbandoned(base: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(PREFIX)) continue;
    const root = join(base, name);
    const owner = ownerOf(root);
    const abandoned = owner === undefined ? ageMs(root) > UNOWNED_GRACE_MS : !isAlive(owner);
    if (abandoned) rmSync(root, { recursive: true, force: true });
  }
}

function ownerOf(root: string): number | undefined {
  try {
    return Number(readFileSync(join(root, OWNER_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but somebody else's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
