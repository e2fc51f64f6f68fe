/**
 * The console's built assets (`npm run build` → `dist/console/`: the
 * bundled script and stylesheet, each named by its digest, and
 * `manifest.json` naming them), read once at start into memory. A name that
 * carries its digest is cached for a year: a new build is a new name, so a
 * browser fetches only the page and the API calls after its first visit.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface ConsoleAssets {
  /** `/console/assets/app.<digest>.js` */
  scriptPath: string;
  /** `/console/assets/app.<digest>.css` */
  stylePath: string;
  /** By file name (`app.<digest>.js`). */
  files: ReadonlyMap<string, ConsoleAsset>;
}

/** What `scripts/build-console.mjs` writes beside the assets. */
interface Manifest {
  script: string;
  style: string;
}

/** Where a build put the assets: `dist/console/` (this module runs from `dist/` or, in tests, from `src/`). */
export function consoleAssetsDirectory(): string {
  for (const relative of ['../../console/', '../../../dist/console/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}manifest.json`)) return dir;
  }
  throw new Error(
    'console.enabled: the console is not built (no dist/console/manifest.json): run `npm run build`',
  );
}

export function loadConsoleAssets(dir = consoleAssetsDirectory()): ConsoleAssets {
  const manifest = JSON.parse(readFileSync(`${dir}manifest.json`, 'utf8')) as Manifest;
  const files = new Map<string, ConsoleAsset>();
  for (const name of [manifest.script, manifest.style]) {
    if (!/^app\.[A-Za-z0-9_-]{8,}\.(js|css)$/.test(name)) {
      throw new Error(`console: the manifest names an unexpected file: ${name}`);
    }
    const digest = name.split('.')[1] as string;
    files.set(name, {
      body: readFileSync(`${dir}${name}`),
      contentType: name.endsWith('.js')
        ? 'text/javascript; charset=utf-8'
        : 'text/css; charset=utf-8',
      etag: `"${digest}"`,
    });
  }
  return {
    scriptPath: `/console/assets/${manifest.script}`,
    stylePath: `/console/assets/${manifest.style}`,
    files,
  };
}
