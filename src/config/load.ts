/**
 * Reads the configuration once, at the edge: YAML → `${ENV}` expansion →
 * schema validation → the files it names on disk (`files.ts`) → relative
 * paths resolved against the file's folder. Every problem of every step is
 * collected into one ConfigError, each named by its key path: an unset
 * variable never hides a bad key or a missing folder.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseDocument, type YAMLError } from 'yaml';
import { expandEnv, type ExpansionProblem } from './env.js';
import { inBase, servingFileProblems, tlsFileProblems, type ServingChecks } from './files.js';
import { describeIssue, formatPath, problemMessages } from './problems.js';
import { configSchema, type GatewayConfig } from './schema.js';

export type { ServingChecks } from './files.js';

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

export interface LoadOptions {
  /**
   * For a process that serves (`serve`, `config check`): the `tokens.keys`
   * folder and the seed file are checked too, their problems reported with
   * the rest.
   */
  serving?: ServingChecks;
}

/** Loads and validates a YAML config file. @throws ConfigError */
export function loadConfigFile(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadOptions = {},
): Promise<LoadedConfig> {
  return loadConfigFiles([file], env, options);
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
  options: LoadOptions = {},
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
  const baseDir = dirname(paths[0] as string);
  const checked = check(raw, baseDir, expansion);
  if (options.serving !== undefined) {
    const onDisk = { baseDir, flagged: checked.flagged };
    checked.problems.push(...(await servingFileProblems(raw, onDisk, options.serving)));
  }
  return { config: configOrThrow(checked, source), files: paths };
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
  return configOrThrow(check(raw, dirname(source), expansion), source);
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

/** Validates an already-parsed config object. @throws ConfigError */
export function validateConfig(raw: unknown, baseDir: string, source: string): GatewayConfig {
  return configOrThrow(check(raw, baseDir, []), source);
}

/** Every problem of a config, and the config when there are none. */
interface Checked {
  config: GatewayConfig | undefined;
  problems: string[];
  /** Key paths with a problem: files there are not looked for. */
  flagged: Set<string>;
}

/**
 * Expansion problems, schema problems and unreadable TLS files, all in one
 * list; relative paths resolved against `baseDir` once there are none.
 */
function check(raw: unknown, baseDir: string, expansion: readonly ExpansionProblem[]): Checked {
  const problems = expansion.map((p) => `${formatPath(p.path)}: ${p.message}`);
  const flagged = new Set(expansion.map((p) => formatPath(p.path)));
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      config: undefined,
      problems: [...problems, '(top level): must be a mapping of keys'],
      flagged,
    };
  }
  const result = configSchema.safeParse(raw, { error: problemMessages });
  if (!result.success) {
    // A value whose variable is unset is already reported; its emptiness is not news.
    const issues = result.error.issues.filter((issue) => !flagged.has(formatPath(issue.path)));
    problems.push(...issues.flatMap((issue) => describeIssue(issue, configSchema)));
    for (const issue of result.error.issues) {
      // An unknown key flags itself, not the mapping that holds it.
      const paths =
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((key) => [...issue.path, key])
          : [issue.path];
      for (const path of paths) flagged.add(formatPath(path));
    }
  }
  problems.push(...tlsFileProblems(raw, { baseDir, flagged }));
  if (!result.success || problems.length > 0) return { config: undefined, problems, flagged };
  return { config: resolvePaths(result.data, baseDir), problems, flagged };
}

function configOrThrow(checked: Checked, source: string): GatewayConfig {
  if (checked.config === undefined || checked.problems.length > 0)
    throw new ConfigError(source, checked.problems);
  return checked.config;
}

/** The config's file paths, relative to the config file, made absolute. */
function resolvePaths(config: GatewayConfig, baseDir: string): GatewayConfig {
  const at = (path: string) => inBase(baseDir, path);
  if (config.seed !== undefined) config.seed = at(config.seed);
  if (config.tokens.keys !== undefined) config.tokens.keys = at(config.tokens.keys);
  if (config.sso.secretsKeyFile !== undefined)
    config.sso.secretsKeyFile = at(config.sso.secretsKeyFile);
  for (const route of config.routes) {
    const tls = route.tls;
    if (tls === undefined) continue;
    for (const name of ['ca', 'cert', 'key'] as const) {
      const file = tls[name];
      if (file !== undefined) tls[name] = at(file);
    }
  }
  const listenTls = config.listen.tls;
  if (listenTls !== undefined) {
    listenTls.cert = at(listenTls.cert);
    listenTls.key = at(listenTls.key);
  }
  const redisTls = config.store.redis?.tls;
  if (redisTls?.ca !== undefined) redisTls.ca = at(redisTls.ca);
  if (config.sso.ca !== undefined) config.sso.ca = at(config.sso.ca);
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
