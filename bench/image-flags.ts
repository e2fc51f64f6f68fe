/**
 * The Node flags the image starts the gateway with: the arguments between
 * `node` and `dist/cli.js` in the Dockerfile's ENTRYPOINT. The benchmarks
 * read them from there, so what they measure is what the image runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './processes.js';

export function imageNodeFlags(dockerfile = join(PROJECT_ROOT, 'Dockerfile')): string[] {
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(dockerfile, 'utf8'))?.[1];
  if (entrypoint === undefined) throw new Error(`${dockerfile}: no ENTRYPOINT in exec form`);
  const argv = JSON.parse(entrypoint) as string[];
  const script = argv.indexOf('dist/cli.js');
  if (argv[0] !== 'node' || script < 1)
    throw new Error(`${dockerfile}: the ENTRYPOINT is not node … dist/cli.js: ${entrypoint}`);
  return argv.slice(1, script);
}
