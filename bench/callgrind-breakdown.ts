/**
 * Where the gateway's instructions per request go, beyond bare undici's:
 * reads the callgrind dumps `npm run bench:instructions` keeps
 * (`BENCH_INSTRUCTIONS_KEEP=<dir>`), names the JIT code from V8's
 * `--perf-basic-prof` map kept next to each dump, and prints the self cost
 * per request of each group (the gateway's files, Node's HTTP and stream
 * code, undici, other packages, V8 builtins and runtime, GC, Node's C++)
 * and of each function, gateway − bare undici, largest first.
 *
 * Usage: tsx bench/callgrind-breakdown.ts <dir> [requests counted] [top N]
 * [baseline] [subject] (defaults 4000, 40, `bare-undici` and `gateway`; the
 * gRPC benchmark's baseline is `bare-http2-proxy`). The dir holds
 * `<baseline>.<pid>.1-01` and `<subject>.<pid>.1-01` (main thread, first
 * dump) and their `.perf.map`. The columns keep their names: "undici" is
 * the baseline's.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GC_GROUP, groupOf, readCodeMap, readDump, type Costs } from './callgrind-dump.js';

function dumpIn(dir: string, prefix: string): string {
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}.`) && f.endsWith('.1-01'));
  if (file === undefined) throw new Error(`no ${prefix}.<pid>.1-01 dump in ${dir}`);
  return join(dir, file);
}

function load(dir: string, prefix: string): Costs {
  const dump = dumpIn(dir, prefix);
  return readDump(dump, readCodeMap(dump.replace(/\.1-01$/, '.perf.map')));
}

function sumBy(costs: Costs, keyOf: (key: string) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, cost] of costs.byFunction) {
    const k = keyOf(key);
    out.set(k, (out.get(k) ?? 0) + cost);
  }
  return out;
}

function diffTable(
  gateway: Map<string, number>,
  undici: Map<string, number>,
  per: number,
  top: number,
): string[] {
  const keys = new Set([...gateway.keys(), ...undici.keys()]);
  const rows = [...keys].map((k) => ({
    k,
    g: (gateway.get(k) ?? 0) / per,
    u: (undici.get(k) ?? 0) / per,
  }));
  rows.sort((a, b) => b.g - b.u - (a.g - a.u));
  const fmt = (n: number): string => Math.round(n).toLocaleString('en').padStart(9);
  return rows
    .slice(0, top)
    .map(
      (r) =>
        `${fmt(r.g - r.u)} ${fmt(r.g)} ${fmt(r.u)}  ${r.k.replace('\t', '  [')}${r.k.includes('\t') ? ']' : ''}`,
    );
}

function main(): void {
  const [dir, countArg, topArg, baseline = 'bare-undici', subject = 'gateway'] =
    process.argv.slice(2);
  if (dir === undefined)
    throw new Error('usage: tsx bench/callgrind-breakdown.ts <dir> [requests] [top]');
  const per = Number(countArg ?? 4000);
  const top = Number(topArg ?? 40);
  const gateway = load(dir, subject);
  const undici = load(dir, baseline);
  const header = `${'Δ/req'.padStart(9)} ${'gateway'.padStart(9)} ${'undici'.padStart(9)}  `;
  const gc = (costs: Costs): number => sumBy(costs, groupOf).get(GC_GROUP) ?? 0;
  const mutator = (costs: Costs): number => Math.round((costs.total - gc(costs)) / per);
  const out = [
    `instructions per request: gateway ${Math.round(gateway.total / per)}, bare undici ${Math.round(undici.total / per)}, +${Math.round((gateway.total - undici.total) / per)}`,
    `without GC (whether a full collection falls in the window moves a count by ±50k): gateway ${mutator(gateway)}, bare undici ${mutator(undici)}, ratio ${(mutator(gateway) / mutator(undici)).toFixed(3)}`,
    '',
    `${header}group`,
    ...diffTable(sumBy(gateway, groupOf), sumBy(undici, groupOf), per, 1000),
    '',
    `${header}function [object]`,
    ...diffTable(gateway.byFunction, undici.byFunction, per, top),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
