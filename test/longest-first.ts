/**
 * Vitest's file order (`sequence.sequencer`): the longest files start first,
 * so that the last file a worker takes is a short one and the run does not
 * end on one worker finishing a two-minute suite while the others idle.
 *
 * Vitest's own order reads the durations of the last run from its cache in
 * node_modules/.vite, which a fresh clone (CI) does not have; without it,
 * it puts the largest files first, which ranks a short file of slow
 * processes (cli/tenants.redis.test.ts, 17 lines) after a long one of fast
 * cases. Here the order comes from test/file-seconds.json: what each file
 * took in a whole run on the 2-core machine (written from vitest's results
 * cache by scripts/file-seconds.ts). A file it does not list (a new suite)
 * is estimated from its size at the median seconds per KB of the listed
 * ones, so it takes a place on the same scale without an entry. Ties keep
 * vitest's path order.
 */
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const FILE_SECONDS = JSON.parse(
  readFileSync(new URL('file-seconds.json', import.meta.url), 'utf8'),
) as Record<string, number>;

export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const kb = new Map(files.map((spec) => [spec, sizeKb(spec.moduleId)]));
    const perKb = median(
      files.flatMap((spec) => {
        const known = FILE_SECONDS[relative(root, spec.moduleId)];
        const size = kb.get(spec) ?? 0;
        return known === undefined || size === 0 ? [] : [known / size];
      }),
    );
    const expected = new Map(
      files.map((spec) => [
        spec,
        FILE_SECONDS[relative(root, spec.moduleId)] ?? (kb.get(spec) ?? 0) * perKb,
      ]),
    );
    return Promise.resolve(
      [...files].sort((a, b) => (expected.get(b) ?? 0) - (expected.get(a) ?? 0)),
    );
  }
}

function sizeKb(file: string): number {
  try {
    return statSync(file).size / 1024;
  } catch {
    return 0;
  }
}

/** The middle value (1 when there is none: sizes alone then order the files). */
function median(values: number[]): number {
  if (values.length === 0) return 1;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
