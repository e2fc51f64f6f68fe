/**
 * Writes docs/openapi.json (`npm run docs`): the document the gateway serves
 * at `/.well-known/openapi.json`, for readers and client generators without a
 * running gateway. `test/api/openapi.redis.test.ts` checks that the committed
 * file is what this writes.
 *
 *   tsx scripts/openapi.ts [out]   (default: docs/openapi.json)
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../src/api/openapi.js';

export const DEFAULT_OUT = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/** The file's text: the served document, indented, ending with a newline. */
export function renderOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(resolve(process.argv[2] ?? DEFAULT_OUT), renderOpenApi());
}
