/**
 * Issue 31: the floors of `src/`. `src/proxy/decide/` (the verdict: a
 * security review) and `src/proxy/forward/` (the transport: a performance
 * and fault review) stay apart — forwarding loads nothing of deciding, and
 * deciding takes from forwarding only a type (the TLS settings a route
 * carries to its pool), never code; and no import goes round in a circle.
 */
import { describe, expect, it } from 'vitest';
import { BENCH, importsOf, sourceFiles } from '../support/source-imports.js';

const DECIDE = 'src/proxy/decide/';
const FORWARD = 'src/proxy/forward/';

describe('layering of src/proxy', () => {
  it('forward/ imports nothing from decide/, not even a type', () => {
    const crossings = sourceFiles()
      .filter((file) => file.startsWith(FORWARD))
      .flatMap((file) =>
        importsOf(file)
          .filter((i) => i.to.startsWith(DECIDE))
          .map((i) => `${file} → ${i.to}`),
      );
    expect(crossings).toEqual([]);
  });

  it('decide/ imports no code from forward/ (types only)', () => {
    const crossings = sourceFiles()
      .filter((file) => file.startsWith(DECIDE))
      .flatMap((file) =>
        importsOf(file)
          .filter((i) => i.to.startsWith(FORWARD) && !i.typeOnly)
          .map((i) => `${file} → ${i.to}`),
      );
    expect(crossings).toEqual([]);
  });

  it('neither imports the entry ways or the dispatcher above them', () => {
    const above = (to: string) =>
      to === 'src/http/dispatch.ts' ||
      to === 'src/gateway.ts' ||
      /^src\/proxy\/entry-[^/]+$/.test(to);
    const upwards = sourceFiles()
      .filter((file) => file.startsWith(DECIDE) || file.startsWith(FORWARD))
      .flatMap((file) =>
        importsOf(file)
          .filter((i) => above(i.to))
          .map((i) => `${file} → ${i.to}`),
      );
    expect(upwards).toEqual([]);
  });
});

/**
 * Issue 43: the floors of `src/`, lowest first. An import — a type's too —
 * goes to its own floor or one below, never up; the longest prefix names a
 * file's floor (`src/http/dispatch.ts`, which routes a request to ops, the
 * api or the proxy, stands above the HTTP edge it belongs to).
 */
const FLOORS: readonly (readonly string[])[] = [
  ['src/text/', 'src/errors.ts', 'src/version.ts', 'src/header-names.ts'],
  ['src/config/'],
  ['src/store/'],
  ['src/audit/'],
  ['src/auth/'],
  ['src/http/'],
  ['src/ops/', 'src/mail/'],
  ['src/identity/'],
  ['src/api/', 'src/proxy/'],
  ['src/core/'],
  ['src/http/dispatch.ts'],
  ['src/gateway/'],
  ['src/gateway.ts'],
  ['src/cli/'],
  ['src/cli.ts'],
];

function floorOf(file: string): number {
  let best = -1;
  let length = 0;
  FLOORS.forEach((prefixes, floor) => {
    for (const prefix of prefixes) {
      if (file.startsWith(prefix) && prefix.length > length)
        [best, length] = [floor, prefix.length];
    }
  });
  return best;
}

describe('floors of src/', () => {
  it('every file stands on a floor', () => {
    expect(sourceFiles().filter((file) => floorOf(file) < 0)).toEqual([]);
  });

  it('no import goes up a floor, not even a type (audit → ops was the last)', () => {
    const upwards = sourceFiles().flatMap((file) =>
      importsOf(file)
        .filter((i) => floorOf(i.to) > floorOf(file))
        .map((i) => `${file} → ${i.to}`),
    );
    expect(upwards).toEqual([]);
  });

  it('src/ itself holds at most five files: the entry, the composition root and what stands below all', () => {
    const root = sourceFiles().filter((file) => !file.slice('src/'.length).includes('/'));
    expect(root.length).toBeLessThanOrEqual(5);
  });
});

describe('import graph of src/', () => {
  it('has no cycle among the imports that load code', () => {
    expect(cycles(sourceFiles(), (file) => importsOf(file).filter((i) => !i.typeOnly))).toEqual([]);
  });

  it('has no cycle at all, types included, in src/ or bench/', () => {
    for (const files of [sourceFiles(), sourceFiles(BENCH)]) {
      expect(cycles(files, importsOf)).toEqual([]);
    }
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(cycles(Object.keys(graph), (f) => (graph[f] ?? []).map((to) => ({ to })))).toEqual([
      'a → b → c → a',
    ]);
  });
});

/** Every cycle a depth-first walk meets, each written from where it was entered. */
function cycles(files: readonly string[], edges: (file: string) => { to: string }[]): string[] {
  const known = new Set(files);
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const found: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const { to } of edges(file)) {
      if (!known.has(to)) continue;
      if (state.get(to) === 'open') found.push([...path.slice(path.indexOf(to)), to].join(' → '));
      else if (state.get(to) === undefined) visit(to);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return found;
}
