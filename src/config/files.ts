/**
 * The files a config names, checked on disk. They are read from the
 * document before validation succeeds, so that one run reports a missing
 * file together with an unset `${VAR}` and a bad key: an operator fixes
 * every problem at once, not one per attempt. A value whose key path is
 * already reported (`flagged`: an unset variable, a wrong type) is not
 * looked for: its emptiness is not news.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { formatPath } from './problems.js';

export interface FileChecks {
  /** Relative paths resolve against it (the first config file's folder). */
  baseDir: string;
  /** Key paths (`formatPath`) already reported: files at or under them are not checked. */
  flagged: ReadonlySet<string>;
}

/**
 * What a serving process also needs on disk (`serve`, `config check`): the
 * `tokens.keys` folder and the seed file, whose content its owner checks.
 */
export interface ServingChecks {
  /** The problems of the seed file at this absolute path; none: []. */
  seedProblems(file: string): Promise<string[]>;
}

/** `path` resolved against the config's folder. */
export const inBase = (baseDir: string, path: string): string =>
  isAbsolute(path) ? path : resolve(baseDir, path);

/** The TLS files of routes and the store: every command reads them. */
export function tlsFileProblems(raw: unknown, checks: FileChecks): string[] {
  const paths: (string | number)[][] = [
    ['store', 'redis', 'tls', 'ca'],
    ['sso', 'ca'],
    ['listen', 'tls', 'cert'],
    ['listen', 'tls', 'key'],
  ];
  const routes = valueAt(raw, ['routes']);
  if (Array.isArray(routes)) {
    routes.forEach((_route, i) => {
      for (const name of ['ca', 'cert', 'key']) paths.push(['routes', i, 'tls', name]);
    });
  }
  const problems: string[] = [];
  for (const path of paths) {
    const file = fileAt(raw, path, checks);
    if (file !== undefined && !readable(file))
      problems.push(`${formatPath(path)}: cannot read ${file}`);
  }
  return problems;
}

/**
 * The `tokens.keys` folder (missing, every replica would mint a key of its
 * own and refuse the others' tokens; `tenant-gateway keys add` creates it;
 * omitted, the key is ephemeral: the demo), the `sso.secretsKeyFile` (its
 * content is checked when the core loads it) and the seed file.
 */
export async function servingFileProblems(
  raw: unknown,
  checks: FileChecks,
  serving: ServingChecks,
): Promise<string[]> {
  const problems: string[] = [];
  const keys = fileAt(raw, ['tokens', 'keys'], checks);
  if (keys !== undefined && !readableDirectory(keys)) {
    problems.push(
      `tokens.keys: no readable directory ${keys} (every instance must share one; \`tenant-gateway keys add\` creates it with a key)`,
    );
  }
  const sealingKey = fileAt(raw, ['sso', 'secretsKeyFile'], checks);
  if (sealingKey !== undefined && !readable(sealingKey)) {
    problems.push(
      `sso.secretsKeyFile: cannot read ${sealingKey} (every instance must share it; openssl rand -base64 32 makes one)`,
    );
  }
  const seed = fileAt(raw, ['seed'], checks);
  if (seed !== undefined)
    problems.push(...(await serving.seedProblems(seed)).map((p) => `seed: ${seed}: ${p}`));
  return problems;
}

/**
 * The non-empty string at `path`, resolved, unless that path or a mapping
 * holding it is already reported (`store.redis.tls: applies to a rediss://
 * url` says enough about `store.redis.tls.ca`).
 */
function fileAt(raw: unknown, path: (string | number)[], checks: FileChecks): string | undefined {
  const value = valueAt(raw, path);
  if (typeof value !== 'string' || value === '') return undefined;
  for (let end = 1; end <= path.length; end++)
    if (checks.flagged.has(formatPath(path.slice(0, end)))) return undefined;
  return inBase(checks.baseDir, value);
}

function valueAt(raw: unknown, path: readonly (string | number)[]): unknown {
  let node = raw;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[part];
  }
  return node;
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

function readableDirectory(dir: string): boolean {
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
