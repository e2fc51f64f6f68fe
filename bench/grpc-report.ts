/**
 * The gRPC benchmark's tables (`grpc.ts`): instructions per call with the
 * gateway's ratio to the bare `node:http2` proxy (issue 47's ≤ 1.3×), and
 * calls per second, p50 and p99 per run with their ranges and the ratios
 * run by run.
 */
import type { Counted } from './callgrind-count.js';
import type { GrpcRun } from './grpc-load.js';
import { spread } from './spread.js';

/** Issue 47: instructions per unary call through the gateway ≤ 1.3 × the bare proxy's. */
export const TARGET_RATIO = 1.3;
const BARE = 'bare http2 proxy';
const GATEWAY = 'gateway';

/** One proxy's measured run of one round. */
export interface RateRow {
  round: number;
  name: string;
  run: GrpcRun;
  /** CPU seconds the proxy's process used over the measured run. */
  cpu: number;
  /** The machine's 1-minute load average at the end of the run. */
  load: number;
}

const int = (n: number): string => Math.round(n).toLocaleString('en');

export function formatCounts(counts: Map<string, Counted>, about: string): string {
  const bare = counts.get(BARE);
  const rows = [...counts].map(([name, c]) => {
    const ratio = (mine: number, theirs: number | undefined) =>
      theirs === undefined ? '' : (mine / theirs).toFixed(3);
    return `${name.padEnd(18)} ${int(c.all).padStart(10)} ${int(c.withoutGc).padStart(12)}   ${ratio(c.all, bare?.all).padStart(10)} ${ratio(c.withoutGc, bare?.withoutGc).padStart(17)}`;
  });
  const lines = [
    `Instructions per unary gRPC call, main thread (callgrind; ${about})`,
    `${'target'.padEnd(18)} ${'in all'.padStart(10)} ${'without GC'.padStart(12)}   ${'÷ bare'.padStart(10)} ${'÷ bare without GC'.padStart(17)}`,
    ...rows,
  ];
  const gateway = counts.get(GATEWAY);
  if (bare !== undefined && gateway !== undefined) {
    const ratio = gateway.withoutGc / bare.withoutGc;
    const verdict = ratio <= TARGET_RATIO ? 'met' : 'missed';
    lines.push(
      `gateway ÷ bare http2 proxy: ${ratio.toFixed(3)} without GC, ${(gateway.all / bare.all).toFixed(3)} in all (issue 47: ≤ ${TARGET_RATIO}, ${verdict}); the gateway's own work: +${int(gateway.withoutGc - bare.withoutGc)} a call`,
    );
  }
  return lines.join('\n');
}

const perSecond = (r: RateRow): number => r.run.completed / r.run.seconds;
const p = (r: RateRow, q: number): number => r.run.latencies.percentile(q) / 1000;

export function formatRates(rows: RateRow[], about: string): string {
  const lines = [
    `Unary calls at saturation (${about})`,
    `run  ${'target'.padEnd(18)} ${'calls/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'CPU µs/call'.padStart(12)} ${'load'.padStart(5)}`,
    ...rows.map(
      (r) =>
        `${String(r.round).padStart(3)}  ${r.name.padEnd(18)} ${int(perSecond(r)).padStart(8)} ${p(r, 50).toFixed(2).padStart(7)} ${p(r, 99).toFixed(2).padStart(7)} ${((r.cpu / r.run.completed) * 1e6).toFixed(1).padStart(12)} ${r.load.toFixed(2).padStart(5)}`,
    ),
    '',
  ];
  const range = (values: number[], digits: number): string => {
    const s = spread(values);
    return `${s.min.toFixed(digits)}–${s.max.toFixed(digits)} (median ${s.median.toFixed(digits)})`;
  };
  for (const name of [BARE, GATEWAY]) {
    const mine = rows.filter((r) => r.name === name);
    if (mine.length === 0) continue;
    lines.push(
      `${name.padEnd(18)} calls/s ${range(mine.map(perSecond), 0)}, p99 ${range(
        mine.map((r) => p(r, 99)),
        2,
      )} ms, CPU ${range(
        mine.map((r) => (r.cpu / r.run.completed) * 1e6),
        1,
      )} µs/call`,
    );
  }
  const ratios = (of: (r: RateRow) => number): number[] =>
    [...new Set(rows.map((r) => r.round))].flatMap((round) => {
      const bare = rows.find((r) => r.round === round && r.name === BARE);
      const gateway = rows.find((r) => r.round === round && r.name === GATEWAY);
      return bare === undefined || gateway === undefined ? [] : [of(gateway) / of(bare)];
    });
  lines.push(
    `gateway ÷ bare, run by run: calls/s ${range(ratios(perSecond), 2)}, p99 ${range(
      ratios((r) => p(r, 99)),
      2,
    )}, CPU per call ${range(
      ratios((r) => r.cpu / r.run.completed),
      2,
    )}`,
  );
  return lines.join('\n');
}
