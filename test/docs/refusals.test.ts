/**
 * docs/security.md's "Every refusal" table is the reference clients switch
 * on: it must hold one row for every CODE the gateway can answer, with the
 * status the gateway gives it, and each test a row names as its proof must
 * assert that CODE.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ERROR_CODES, GatewayError, type ErrorCode } from '../../src/errors.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = 'docs/security.md';

interface Row {
  status: number;
  code: string;
  proofs: string[];
}

function refusalRows(): Row[] {
  const page = readFileSync(join(ROOT, PAGE), 'utf8');
  const section = page.split(/^## Every refusal\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((line) => /^\|\s*\d{3}\s*\|/.test(line))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      return {
        status: Number(cells[1]),
        code: (cells[2] ?? '').replace(/`/g, ''),
        // Named as paths from the repository's root, in code spans.
        proofs: [...(cells[4] ?? '').matchAll(/`([^`]+)`/g)].map((m) => join(ROOT, m[1] as string)),
      };
    });
}

/** Every CODE the gateway has: the one error type's list. */
function allCodes(): ErrorCode[] {
  return [...ERROR_CODES];
}

it('has one row per CODE, with the status the gateway gives it', () => {
  const rows = refusalRows();
  const codes = allCodes();
  expect(codes.length).toBeGreaterThan(10);
  expect(rows.map((r) => r.code).sort()).toEqual([...codes].sort());
  for (const row of rows) {
    expect(row.status, row.code).toBe(new GatewayError(row.code as ErrorCode, 'x').status);
  }
});

it('names, in every row, tests that assert that CODE', () => {
  const unproved: string[] = [];
  for (const row of refusalRows()) {
    if (row.proofs.length === 0) unproved.push(`${row.code}: no test named`);
    for (const file of row.proofs) {
      if (!/\.test\.ts$/.test(file)) unproved.push(`${row.code}: ${file} is not a test`);
      else if (!existsSync(file)) unproved.push(`${row.code}: ${file} does not exist`);
      else if (!readFileSync(file, 'utf8').includes(`'${row.code}'`))
        unproved.push(`${row.code}: ${file} never asserts it`);
    }
  }
  expect(unproved).toEqual([]);
});
