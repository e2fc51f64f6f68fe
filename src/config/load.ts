/**
 * Reads the configuration once, at the edge: YAML → `${ENV}` expansion →
 * schema validation (every problem collected, each named by its key path) →
 * relative paths resolved against the file's folder.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import { expandEnv, type ExpansionProblem } from './env.js';
import { describeIssue, formatPath, problemMessages } from './problems.js';
import { configSchema, type GatewayConfig } from './schema.js';

export { formatPath } from './problems.js';

/** Start-up fails with this: one line per problem, each naming its key path. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid configuration ${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadedConfig {
  config: GatewayConfig;
  /** Absolute paths of the files, in the order they were layered; empty for the built-in defaults. */
  files: string[];
}

/** Loads and validates a YAML config file. @throws ConfigError */
export function loadConfigFile(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  return loadConfigFiles([file], env);
}

/**
 * Loads config files as layers: each later file is a JSON merge patch on the
 * earlier ones (mappings merged key by key, `null` removes a key, a list or
 * a scalar replaces) — `--config gateway.yaml --config store.yaml`
 * swaps the store of a config kept elsewhere (the kustomize Sentinel
 * component does this). Relative paths resolve against the first file's
 * folder. @throws ConfigError
 */
export async function loadConfigFiles(
  files: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  const paths = files.map((f) => resolve(f));
  const layers: ParsedText[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ConfigError(path, [`cannot read the file: ${(err as NodeJS.ErrnoException).code}`]);
    }
    layers.push(parseText(text, path, env));
  }
  const source = paths.join(' + ');
  const raw = layers.map((l) => l.raw).reduce(layer);
  const expansion = layers.flatMap((l) => l.expansion);
  return { config: validate(raw, dirname(paths[0] as string), source, expansion), files: paths };
}

/** The built-in defaults: in-memory store, no routes, ephemeral signing key. */
export function defaultConfig(): LoadedConfig {
  return { config: validateConfig({}, process.cwd(), '(built-in defaults)'), files: [] };
}

/**
 * Parses YAML text as a config; relative paths resolve against `source`'s
 * folder. Problems of expansion and of validation are reported together.
 * @throws ConfigError
 */
export function parseConfigText(
  text: string,
  source: string,
  env: NodeJS.ProcessEnv = process.env,
): GatewayConfig {
  const { raw, expansion } = parseText(text, source, env);
  return validate(raw, dirname(source), source, expansion);
}

interface ParsedText {
  raw: unknown;
  expansion: ExpansionProblem[];
}

/** YAML → `${ENV}` expanded, not yet validated. @throws ConfigError for YAML it cannot read */
function parseText(text: string, source: string, env: NodeJS.ProcessEnv): ParsedText {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      source,
      doc.errors.map((e) => describeYamlError(e, text)),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS() ?? {};
  } catch (err) {
    // e.g. "Excessive alias count" (a billion-laughs document)
    throw new ConfigError(source, [`YAML: ${(err as Error).message}`]);
  }
  const expansion: ExpansionProblem[] = [];
  return { raw: expandEnv(raw, env, expansion), expansion };
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `over` layered on `under` as a JSON merge patch (RFC 7386): mappings merge
 * key by key, `null` removes a key, anything else replaces.
 */
function layer(under: unknown, over: unknown): unknown {
  if (!isMapping(under) || !isMapping(over)) return over;
  const merged: Record<string, unknown> = { ...under };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete merged[key];
    else merged[key] = layer(under[key], value);
  }
  return merged;
}

/**
 * What only a process that serves must find on disk: the `tokens.keys`
 * directory it names. Missing, every replica would mint a key of its own
 * and refuse the others' tokens; `serve` and `config check` refuse it
 * (`tenant-gateway keys add` creates it). Omitted, the key is ephemeral
 * (the demo). @throws ConfigError
 */
export function checkServingFiles(loaded: LoadedConfig): void {
  const dir = loaded.config.tokens.keys;
  if (dir === undefined) return;
  let isDirectory = false;
  try {
    accessSync(dir, constants.R_OK | constants.X_OK);
    isDirectory = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) {
    throw new ConfigError(loaded.files.join(' + ') || '(built-in defaults)', [
      `tokens.keys: no readable directory ${dir} (every instance must share one; \`tenant-gateway keys add\` creates it with a key)`,
    ]);
  }
}

/** Validates an already-parsed config object. @throws ConfigError */
export function validateConfig(raw: unknown, baseDir: string, source: string): GatewayConfig {
  return validate(raw, baseDir, source, []);
}

function validate(
  raw: unknown,
  baseDir: string,
  source: string,
  expansion: readonly ExpansionProblem[],
): GatewayConfig {
  const problems = expansion.map((p) => `${formatPath(p.path)}: ${p.message}`);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(source, [...problems, '(top level): must be a mapping of keys']);
  }
  const result = configSchema.safeParse(raw, { error: problemMessages });
  if (!result.success) {
    // A value whose variable is unset is already reported; its emptiness is not news.
    const flagged = new Set(expansion.map((p) => formatPath(p.path)));
    const issues = result.error.issues.filter((issue) => !flagged.has(formatPath(issue.path)));
    problems.push(...issues.flatMap((issue) => describeIssue(issue, configSchema)));
  }
  if (!result.success || problems.length > 0) throw new ConfigError(source, problems);
  const config = result.data;
  const inBase = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  if (config.seed !== undefined) config.seed = inBase(config.seed);
  if (config.tokens.keys !== undefined) config.tokens.keys = inBase(config.tokens.keys);
  const fileProblems: string[] = [];
  config.routes.forEach((route, i) => {
    const tls = route.tls;
    if (tls === undefined) return;
    for (const name of ['ca', 'cert', 'key'] as const) {
      const file = tls[name];
      if (file === undefined) continue;
      tls[name] = inBase(file);
      if (!readable(tls[name] as string))
        fileProblems.push(`routes[${i}].tls.${name}: cannot read ${tls[name] as string}`);
    }
  });
  const redisTls = config.store.redis?.tls;
  if (redisTls?.ca !== undefined) {
    redisTls.ca = inBase(redisTls.ca);
    if (!readable(redisTls.ca)) fileProblems.push(`store.redis.tls.ca: cannot read ${redisTls.ca}`);
  }
  if (fileProblems.length > 0) throw new ConfigError(source, fileProblems);
  return config;
}

/**
 * The first line of a pretty YAML error ("… at line 2, column 1"), with a hint
 * when the line has an unquoted `${` inside flow style, where `{` is syntax.
 */
function describeYamlError(error: YAMLError, text: string): string {
  const message = (error.message.split('\n')[0] ?? '').replace(/:$/, '');
  const line = error.linePos?.[0]?.line;
  const lineText = line === undefined ? '' : (text.split(/\r?\n/)[line - 1] ?? '');
  const hint = /[{[][^"'\n]*\$\{/.test(lineText)
    ? ' (inside { } or [ ], quote a ${VAR} reference: port: "${PORT}")'
    : '';
  return `YAML: ${message}${hint}`;
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
