/** The gateway's version: package.json's, the one source for `/metrics` build info and `--version`. */
import { createRequire } from 'node:module';

export const VERSION: string = (
  createRequire(import.meta.url)('../package.json') as { version: string }
).version;
