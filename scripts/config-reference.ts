/**
 * Writes docs/configuration.md from the zod schema (`npm run docs`): every key
 * with its type, default and the description the schema gives it, so the
 * reference cannot drift from the validator. `test/docs` checks that the
 * committed page is what this renders.
 *
 * The markdown is written already in prettier's shape (aligned tables, YAML in
 * prettier's quoting), so `prettier --check` accepts the page as generated.
 *
 *   tsx scripts/config-reference.ts [out]   (default: docs/configuration.md)
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';

export const DEFAULT_OUT = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** One row of a section's table. */
export interface KeyRow {
  /** `routes[].tenant.header` */
  path: string;
  type: string;
  default: string;
  meaning: string;
  /** Neither an object nor a list of objects: a value written as it is. */
  leaf: boolean;
}

export interface Section {
  key: string;
  description: string;
  examples: unknown[];
  /** A value itself (`seed`, `trustedProxies`): its one row says what it is. */
  value: boolean;
  rows: KeyRow[];
}

interface Unwrapped {
  core: z.ZodType;
  optional: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  description: string | undefined;
  examples: unknown[] | undefined;
  /** What a string is when its checks are custom (`HTTP header name`): `typeName` in the metadata. */
  typeName: string | undefined;
}

/** Peels optional, default and pipes (the `integer()` / `boolean()` preprocessing, `.transform`). */
function unwrap(schema: z.ZodType): Unwrapped {
  const found: Unwrapped = {
    core: schema,
    optional: false,
    hasDefault: false,
    defaultValue: undefined,
    description: undefined,
    examples: undefined,
    typeName: undefined,
  };
  let current: z.ZodType = schema;
  for (;;) {
    // Outermost first: a use's own description wins over the shared schema's.
    const meta = z.globalRegistry.get(current);
    found.description ??= meta?.description;
    if (typeof meta?.['typeName'] === 'string') found.typeName ??= meta['typeName'];
    if (Array.isArray(meta?.['examples'])) found.examples ??= meta['examples'] as unknown[];
    if (current instanceof z.ZodOptional) {
      found.optional = true;
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodDefault || current instanceof z.ZodPrefault) {
      if (!found.hasDefault) {
        found.hasDefault = true;
        found.defaultValue = (current.def as { defaultValue: unknown }).defaultValue;
      }
      current = current.def.innerType as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      // preprocess: transform → type (document the type); transform after a type: the type.
      current = (current.out instanceof z.ZodTransform ? current.in : current.out) as z.ZodType;
    } else {
      break;
    }
  }
  found.core = current;
  return found;
}

const code = (text: string): string => `\`${text}\``;

function range(min: number | null, max: number | null): string {
  const finite = (n: number | null) =>
    n !== null && Number.isFinite(n) && Math.abs(n) < 2 ** 53 - 1;
  if (finite(min) && finite(max)) return `${min}–${max}`;
  if (finite(min)) return `≥ ${min}`;
  if (finite(max)) return `≤ ${max}`;
  return '';
}

function typeOf(schema: z.ZodType): string {
  const { core, typeName } = unwrap(schema);
  if (typeName !== undefined) return typeName;
  if (core instanceof z.ZodString) {
    const length =
      core.maxLength === null ? '' : `, ${range(core.minLength ?? 0, core.maxLength)} characters`;
    return `string${length}`;
  }
  if (core instanceof z.ZodNumber) {
    return [core.isInt ? 'integer' : 'number', range(core.minValue, core.maxValue)]
      .filter(Boolean)
      .join(' ');
  }
  if (core instanceof z.ZodBoolean) return 'boolean';
  if (core instanceof z.ZodEnum)
    return `one of: ${core.options.map((o) => code(String(o))).join(', ')}`;
  if (core instanceof z.ZodObject) return 'object';
  if (core instanceof z.ZodArray) {
    const element = typeOf(core.element as z.ZodType);
    return element === 'string' ? 'list of strings' : `list, each ${element}`;
  }
  throw new Error(`config-reference: no type name for a ${core.def.type} schema`);
}

function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`;
  return String(value);
}

function defaultOf(u: Unwrapped): string {
  if (u.hasDefault) {
    const value = u.defaultValue;
    // An object's default is its keys' defaults, given in their own rows.
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return '—';
    return code(inline(value));
  }
  return u.optional ? '—' : 'required';
}

/** The object a key's rows descend into: its own, or its list's elements'. */
function childrenOf(core: z.ZodType): { shape: Record<string, z.ZodType>; suffix: string } | null {
  if (core instanceof z.ZodObject)
    return { shape: core.shape as Record<string, z.ZodType>, suffix: '' };
  if (core instanceof z.ZodArray) {
    const element = unwrap(core.element as z.ZodType).core;
    if (element instanceof z.ZodObject) {
      return { shape: element.shape as Record<string, z.ZodType>, suffix: '[]' };
    }
  }
  return null;
}

function rowsOf(path: string, schema: z.ZodType, rows: KeyRow[]): void {
  const u = unwrap(schema);
  const children = childrenOf(u.core);
  rows.push({
    path,
    type: children?.suffix === '[]' ? 'list of objects' : typeOf(schema),
    default: defaultOf(u),
    meaning: u.description ?? '',
    leaf: children === null,
  });
  if (children === null) return;
  for (const [key, child] of Object.entries(children.shape)) {
    rowsOf(`${path}${children.suffix}.${key}`, child, rows);
  }
}

/** The schema's top-level keys, each with its rows (the key's own first). */
export function configSections(): Section[] {
  return Object.entries(configSchema.shape as Record<string, z.ZodType>).map(([key, schema]) => {
    const u = unwrap(schema);
    const rows: KeyRow[] = [];
    rowsOf(key, schema, rows);
    // A section's own row is its heading and description, unless it is a value itself.
    const value = rows[0]!.leaf;
    return {
      key,
      description: u.description ?? '',
      examples: u.examples ?? [],
      value,
      rows: value ? rows : rows.slice(1),
    };
  });
}

function cell(text: string): string {
  if (text.includes('\n'))
    throw new Error(`config-reference: a line break in a table cell: ${text}`);
  return text.replaceAll('|', '\\|');
}

/** Prettier's width of a cell (the characters used here are all one column wide). */
const width = (text: string): number => [...text].length;

/** A table as prettier aligns it. */
function table(head: string[], body: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(3, width(h), ...body.map((r) => width(r[i]!))));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c + ' '.repeat(widths[i]! - width(c))).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

const INTRO = `<!-- Generated from src/config/schema.ts by \`npm run docs\`: edit the schema's descriptions, not this page. -->

# Configuration reference

Every key the gateway's configuration accepts: its type, default and meaning,
and one example per section. The page is generated from the validator's own
schema, so what it says is what \`tenant-gateway config check\` enforces.

## The configuration file

- One YAML file: \`tenant-gateway serve --config FILE\`, or \`GATEWAY_CONFIG=FILE\`
  when no \`--config\` is given. Without either the gateway runs on the built-in
  defaults (in-memory store, no users, no routes, an ephemeral signing key) and
  says so. \`tenant-gateway config check FILE\` validates a file without starting
  anything.
- \`--config\` may be repeated: each later file is layered on the earlier ones as
  a JSON merge patch (RFC 7386: mappings merged key by key, \`null\` removes a
  key, anything else — a list included — replaces).
- \`\${NAME}\` in any value is replaced by the environment variable (unset or
  empty is an error), \`\${NAME:-fallback}\` uses the fallback, \`$\${\` is a
  literal \`\${\`. Expansion happens after YAML parsing, so a value can never
  change the document's structure. Numbers and booleans may come from the
  environment (\`port: \${PORT}\`).
- Relative paths (\`seed\`, \`tokens.keys\`, TLS files) are resolved against the
  config file's folder.
- Unknown keys are errors. Validation reports every problem at once, each with
  its key path: unset variables, unknown or invalid keys, unreadable TLS files
  and, for \`serve\` and \`config check\`, a missing \`tokens.keys\` folder and
  the seed file's problems:

\`\`\`
invalid configuration /etc/tenant-gateway/gateway.yaml:
  listen.port: environment variable PORT is not set
  routes[1].upstream: must be an http(s) URL
  store.redis.keyprefix: unknown key (did you mean "keyPrefix"?)
  tokens.keys: no readable directory /etc/tenant-gateway/keys (every instance must share one; \`tenant-gateway keys add\` creates it with a key)
\`\`\`

Key paths in the tables below are written as in those errors: \`a.b\` is key
\`b\` inside \`a\`, \`routes[].prefix\` is \`prefix\` in each item of the list
\`routes\`. A default of — means the key is absent unless given.`;

/** The page, exactly as `npm run docs` writes it. */
export function renderConfigReference(): string {
  const sections = configSections();
  const out: string[] = [INTRO, '', '## Sections', ''];
  for (const s of sections) out.push(`- [${s.key}](#${s.key.toLowerCase()})`);
  for (const s of sections) {
    out.push('', `## ${s.key}`, '');
    if (!s.value) out.push(s.description, '');
    out.push(
      ...table(
        ['key', 'type', 'default', 'meaning'],
        s.rows.map((r) => [code(r.path), r.type, r.default, r.meaning].map(cell)),
      ),
    );
    for (const example of s.examples) {
      const yaml = stringify({ [s.key]: example }, { singleQuote: true, lineWidth: 0 });
      out.push('', '```yaml', yaml.trimEnd(), '```');
    }
  }
  return `${out.join('\n')}\n`;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = resolve(process.argv[2] ?? DEFAULT_OUT);
  writeFileSync(target, renderConfigReference());
}
