/**
 * The committed instruction count the gateway is held to
 * (`bench/instructions-baseline.json`): `npm run bench:instructions -- --check`
 * fails when the gateway's instructions per request without V8's GC (a full
 * collection in the window or not moves the totals by ±50k), as a ratio to
 * bare undici's on the same run, grow more than {@link ALLOWED_GROWTH} over the
 * baseline's ratio (a ratio, so a Node or machine that moves both moves
 * neither verdict); `-- --write-baseline` records a new one.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './processes.js';

export const BASELINE_FILE = join(PROJECT_ROOT, 'bench', 'instructions-baseline.json');

/** 5 %: above the count's own spread between runs (~1.5–3 %), below one feature's worth. */
export const ALLOWED_GROWTH = 0.05;

export interface InstructionsBaseline {
  /** Instructions per proxied request, main thread, without V8's GC (`callgrind-dump.ts`). */
  gateway: number;
  bareUndici: number;
  /** gateway ÷ bare undici: what `--check` compares. */
  ratio: number;
  node: string;
  commit: string;
  warmup: number;
  count: number;
  measuredAt: string;
}

export function readBaseline(): InstructionsBaseline {
  return JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as InstructionsBaseline;
}

export function writeBaseline(
  counts: { gateway: number; bareUndici: number },
  run: { warmup: number; count: number },
): InstructionsBaseline {
  const baseline: InstructionsBaseline = {
    gateway: Math.round(counts.gateway),
    bareUndici: Math.round(counts.bareUndici),
    ratio: round3(counts.gateway / counts.bareUndici),
    node: process.version,
    commit: headCommit(),
    warmup: run.warmup,
    count: run.count,
    measuredAt: new Date().toISOString(),
  };
  writeFileSync(BASELINE_FILE, `${JSON.stringify(baseline, null, 2)}\n`);
  return baseline;
}

/** The verdict on a run: a line to print, and whether it passes. */
export function checkAgainst(
  baseline: InstructionsBaseline,
  counts: { gateway: number; bareUndici: number },
): { ok: boolean; message: string } {
  const ratio = counts.gateway / counts.bareUndici;
  const limit = baseline.ratio * (1 + ALLOWED_GROWTH);
  const growth = ((ratio / baseline.ratio - 1) * 100).toFixed(1);
  const message = `gateway ÷ bare undici ${ratio.toFixed(3)} against the baseline's ${baseline.ratio.toFixed(3)} (${baseline.commit.slice(0, 7)}, Node ${baseline.node}): ${growth} %, limit +${ALLOWED_GROWTH * 100} % (${limit.toFixed(3)})`;
  return { ok: ratio <= limit, message };
}

function headCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
