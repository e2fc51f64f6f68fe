/**
 * Vitest global setup: the console's assets built from `console/src` before
 * any suite starts a gateway with `console.enabled` (they are read from
 * `dist/console/`), so a suite runs against the console's source as it is
 * now, with or without an `npm run build` before it.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const script = fileURLToPath(new URL('../scripts/build-console.mjs', import.meta.url));
  execFileSync(process.execPath, [script], { stdio: 'inherit' });
}
