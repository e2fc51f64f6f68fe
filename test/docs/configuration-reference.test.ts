/**
 * docs/configuration.md is generated from the config schema (`npm run docs`):
 * the committed page must be what the generator renders now, every key the
 * validator accepts must be on it with a meaning, and each section's example
 * must pass the validator.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  configSections,
  DEFAULT_OUT,
  renderConfigReference,
} from '../../scripts/config-reference.js';
import { configSchema } from '../../src/config/schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = join(ROOT, 'docs', 'configuration.md');

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  $ref?: string;
  anyOf?: JsonSchema[];
}

/**
 * Every key path that holds a value, read from zod's own JSON Schema of the
 * config (not from the generator's walk, so a key the generator skips fails).
 */
function leafPaths(schema: JsonSchema, path: string, out: string[]): string[] {
  if (schema.$ref !== undefined || schema.anyOf !== undefined) {
    throw new Error(`${path}: unexpected JSON Schema shape (extend leafPaths)`);
  }
  if (schema.properties !== undefined) {
    for (const [key, child] of Object.entries(schema.properties)) {
      leafPaths(child, path === '' ? key : `${path}.${key}`, out);
    }
  } else if (schema.items?.properties !== undefined) {
    leafPaths(schema.items, `${path}[]`, out);
  } else {
    out.push(path);
  }
  return out;
}

/** The page's table rows: key path → [type, default, meaning]. */
function tableRows(page: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of page.split('\n')) {
    const match = /^\| `([^`]+)` +\|(.*)\|$/.exec(line);
    if (match === null) continue;
    const cells = match[2]!.split(/(?<!\\)\|/).map((c) => c.trim());
    expect(rows.has(match[1]!), `${match[1]} appears in two rows`).toBe(false);
    rows.set(match[1]!, cells);
  }
  return rows;
}

describe('docs/configuration.md', () => {
  it('is what `npm run docs` renders from the schema now', () => {
    const committed = readFileSync(PAGE, 'utf8');
    expect(
      committed === renderConfigReference(),
      'docs/configuration.md is stale: run npm run docs',
    ).toBe(true);
  });

  it('names every key of the schema with a type, a default and a meaning', () => {
    const json = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
    const leaves = leafPaths(json as JsonSchema, '', []);
    expect(leaves).toContain('routes[].tenant.header');
    expect(leaves).toContain('store.redis.sentinel.sentinelPassword');
    expect(leaves.length).toBeGreaterThan(90);
    const rows = tableRows(renderConfigReference());
    const missing = leaves.filter((path) => !rows.has(path));
    expect(missing, 'keys missing from the page').toEqual([]);
    const undescribed = leaves.filter((path) => rows.get(path)!.some((cell) => cell === ''));
    expect(undescribed, 'keys without a description in the schema').toEqual([]);
    // Objects (store.redis, routes[].tls, …) have a meaning too.
    const emptyRows = [...rows].filter(([, cells]) => cells.some((c) => c === '')).map(([p]) => p);
    expect(emptyRows, 'rows with an empty cell').toEqual([]);
  });

  /** The keys a section's example cannot stand without (each named in its description). */
  const NEEDS: Record<string, Record<string, unknown>> = {
    mail: { publicUrl: 'https://gw.example.com' },
    console: { sessions: { enabled: true } },
  };

  it('has a heading, a description and a valid example for each top-level key', () => {
    const page = renderConfigReference();
    for (const section of configSections()) {
      expect(page).toContain(`\n## ${section.key}\n`);
      expect(page).toContain(`- [${section.key}](#${section.key.toLowerCase()})`);
      expect(section.description, section.key).not.toBe('');
      if (!section.value) expect(page).toContain(`\n## ${section.key}\n\n${section.description}\n`);
      expect(section.examples.length, `${section.key} has no example`).toBeGreaterThan(0);
      for (const example of section.examples) {
        const result = configSchema.safeParse({ ...NEEDS[section.key], [section.key]: example });
        expect(result.error?.issues ?? [], `example of ${section.key}`).toEqual([]);
      }
    }
  });

  it('is formatted as prettier formats it', async () => {
    const page = renderConfigReference();
    const options = await prettier.resolveConfig(PAGE);
    expect(await prettier.format(page, { ...options, filepath: PAGE })).toBe(page);
  });

  it('comes out byte for byte the same from two runs of the script', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-reference-'));
    try {
      const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
      const script = join(ROOT, 'scripts', 'config-reference.ts');
      const runs = ['first.md', 'second.md'].map((name) => {
        execFileSync(tsx, [script, join(dir, name)], { cwd: ROOT, stdio: 'pipe' });
        return readFileSync(join(dir, name));
      });
      expect(runs[0]!.equals(runs[1]!)).toBe(true);
      expect(runs[0]!.toString('utf8')).toBe(renderConfigReference());
      expect(DEFAULT_OUT).toBe(PAGE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
