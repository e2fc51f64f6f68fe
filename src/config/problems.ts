/**
 * Turns schema issues into the one-line problems of a ConfigError:
 * `routes[1].upstream: must be an http(s) URL`. Messages say what the value
 * must be, never echo it (a value may be a secret that came from `${ENV}`).
 */
import { closest } from 'fastest-levenshtein';
import type { z } from 'zod';

export type KeyPath = readonly (string | number | symbol)[];

/** `routes[1].upstream`; `(top level)` for the empty path. */
export function formatPath(path: KeyPath): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`,
    )
    .join('');
}

/**
 * The messages of schema problems, as a zod error map: pass it as `error` to
 * `safeParse`. Messages a schema sets itself (`.min(1, 'must name …')`) win.
 */
export const problemMessages: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (issue.expected === 'int') return 'must be a whole number';
      return `must be ${article(issue.expected)}, not ${article(kindOf(issue.input))}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'array') return `must have at least ${String(issue.minimum)} item(s)`;
      if (issue.origin === 'string') {
        return issue.minimum === 1
          ? 'must not be empty'
          : `must be at least ${String(issue.minimum)} characters`;
      }
      return `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} item(s)`;
      if (issue.origin === 'string') return `must be at most ${String(issue.maximum)} characters`;
      return `must be at most ${String(issue.maximum)}`;
    default:
      return undefined;
  }
};

/**
 * One line per problem of `issue` (parsed with {@link problemMessages}).
 * `schema` is the root the issue's path is relative to: it supplies the known
 * keys for "did you mean" hints.
 */
/** Keys a release moved: the old spelling is refused with the new one named. */
const MOVED_KEYS: Readonly<Record<string, string>> = {
  'limits.headersTimeoutMs': 'server.headersTimeoutMs',
};

export function describeIssue(issue: z.core.$ZodIssue, schema: unknown): string[] {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(schema, path);
    return issue.keys.map((key) => {
      const moved = MOVED_KEYS[formatPath([...path, key])];
      if (moved !== undefined) return `${formatPath([...path, key])}: moved to ${moved}`;
      const suggestion = known.length > 0 ? closest(key, known) : undefined;
      const hint =
        suggestion !== undefined && similar(key, suggestion)
          ? ` (did you mean "${suggestion}"?)`
          : '';
      return `${formatPath([...path, key])}: unknown key${hint}`;
    });
  }
  return [`${formatPath(path)}: ${issue.message}`];
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'mapping';
  return typeof value;
}

function article(kind: string): string {
  const name = kind === 'object' ? 'mapping' : kind === 'array' ? 'list' : kind;
  if (name === 'null') return 'null';
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function similar(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y || x.includes(y) || y.includes(x)) return true;
  let common = 0;
  for (const ch of new Set(x)) if (y.includes(ch)) common++;
  return common / Math.max(new Set(x).size, new Set(y).size) >= 0.6;
}

interface SchemaDef {
  type?: string;
  shape?: Record<string, unknown>;
  element?: unknown;
  innerType?: unknown;
  out?: unknown;
}

const defOf = (node: unknown): SchemaDef | undefined =>
  (node as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;

/** The keys the schema allows at `path` (for "did you mean" hints). */
function knownKeysAt(schema: unknown, path: KeyPath): string[] {
  let node = unwrap(schema);
  for (const part of path) {
    const def = defOf(node);
    if (def?.type === 'object' && typeof part === 'string') node = def.shape?.[part];
    else if (def?.type === 'array') node = def.element;
    else return [];
    node = unwrap(node);
  }
  const def = defOf(node);
  return def?.type === 'object' && def.shape !== undefined ? Object.keys(def.shape) : [];
}

/** Looks through optional/default wrappers and preprocess pipes to the schema that holds keys. */
function unwrap(node: unknown): unknown {
  for (;;) {
    const def = defOf(node);
    if (def === undefined) return node;
    if (def.innerType !== undefined) node = def.innerType;
    else if (def.type === 'pipe') node = def.out;
    else return node;
  }
}
