// Builds the console (issue 46): console/src → dist/console/, one bundled
// script and one stylesheet, each named by the digest of its bytes, and
// manifest.json naming them (read by src/api/console/console-assets.ts).
// Run by `npm run build`; no CDN, nothing downloaded at run time.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/console/`;

const result = await build({
  entryPoints: [`${root}console/src/main.tsx`],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  write: false,
  legalComments: 'none',
  logLevel: 'warning',
});
const script = Buffer.from(result.outputFiles[0].contents);
const style = readFileSync(`${root}console/src/console.css`);
const named = (bytes, ext) =>
  `app.${createHash('sha256').update(bytes).digest('base64url').slice(0, 16)}.${ext}`;
const manifest = { script: named(script, 'js'), style: named(style, 'css') };

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
writeFileSync(`${out}${manifest.script}`, script);
writeFileSync(`${out}${manifest.style}`, style);
writeFileSync(`${out}manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
