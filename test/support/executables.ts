/**
 * Finding the external programs the suite runs (redis-server, nginx,
 * Chromium): the first candidate path that is an executable file.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** `name` in each directory of PATH, in order. */
export function onPath(name: string): string[] {
  return (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, name));
}

/** The first of `candidates` that exists and may be executed; undefined for none. */
export function findExecutable(candidates: readonly string[]): string | undefined {
  return candidates.find(isExecutable);
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
