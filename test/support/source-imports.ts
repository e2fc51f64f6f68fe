/**
 * The import graph of `src/**\/*.ts`, read from the source text: for each
 * file, what it imports (relative specifiers, resolved to `src/…` paths) and
 * whether the import is for types only (erased at compile time).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';

export const SRC = resolve(import.meta.dirname, '../../src');
export const BENCH = resolve(import.meta.dirname, '../../bench');

export interface SourceImport {
  /** The imported file, relative to the repository (`src/proxy/decide/admit.ts`). */
  to: string;
  /** `import type …` / `export type … from`: nothing of it is loaded at run time. */
  typeOnly: boolean;
}

/** Every `.ts` file under `src/`, relative to the repository (`src/…`). */
export function sourceFiles(dir = SRC): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) found.push(repoPath(path));
  }
  return found.sort();
}

export function sourceText(file: string): string {
  return readFileSync(resolve(SRC, '..', file), 'utf8');
}

const STATIC_IMPORT =
  /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'(\.{1,2}\/[^']+)'/gm;

/** The relative static imports and re-exports of `file` (dynamic `import()` does not load at start). */
export function importsOf(file: string): SourceImport[] {
  const imports: SourceImport[] = [];
  for (const [, type, specifier] of sourceText(file).matchAll(STATIC_IMPORT)) {
    const target = resolve(SRC, '..', dirname(file), (specifier as string).replace(/\.js$/, '.ts'));
    imports.push({ to: repoPath(target), typeOnly: type !== undefined });
  }
  return imports;
}

function repoPath(path: string): string {
  return relative(resolve(SRC, '..'), path).split(/[\\/]/).join(posix.sep);
}
