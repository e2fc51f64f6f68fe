/**
 * Issue 31: the floors of `src/`. `src/proxy/decide/` (the verdict: a
 * security review) and `src/proxy/forward/` (the transport: a performance
 * and fault review) stay apart — forwarding loads nothing of deciding, and
 * deciding takes from forwarding only a type (the TLS settings a route
 * carries to its pool), never code; and no import goes round in a circle.
 */
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles } from '../support/source-imports.js';

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
      to === 'src/dispatch.ts' || to === 'src/gateway.ts' || /^src\/proxy\/entry-[^/]+$/.test(to);
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

describe('import graph of src/', () => {
  it('has no cycle among the imports that load code', () => {
    expect(cycles(sourceFiles(), (file) => importsOf(file).filter((i) => !i.typeOnly))).toEqual([]);
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
