/**
 * Inclusive cost per function of one kept callgrind dump (a function with
 * everything it calls), per request: what `callgrind-breakdown.ts`'s self
 * costs cannot say, such as what one gateway step costs in Node's and V8's
 * code. Through event emitters and JIT inlining the attribution is rough
 * (an `emit` includes whatever its listeners do; an inlined callee counts as
 * its caller), so compare a step with its peer's equivalent, not the sums.
 * A recursive function's calls to itself are not added.
 *
 * Usage: tsx bench/callgrind-inclusive.ts <dir> <prefix> [requests] [top N]
 * [name filter] — the dump `<dir>/<prefix>.<pid>.1-01` and its perf map, as
 * `npm run bench:instructions` or `npm run bench:grpc` keep them
 * (`BENCH_INSTRUCTIONS_KEEP`); defaults 4000 requests, 40 rows, every name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nameAt, readCodeMap, type CodeMap } from './callgrind-dump.js';

interface Inclusive {
  self: Map<string, number>;
  calls: Map<string, number>;
}

/** Self cost and the cost of the calls each function makes, by name. */
function readInclusive(file: string, map: CodeMap): Inclusive {
  const names = new Map<string, string>();
  const resolve = (value: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (m === null) return name(value);
    if (m[2] !== undefined) names.set(m[1] as string, name(m[2]));
    return names.get(m[1] as string) ?? value;
  };
  const name = (raw: string): string => {
    const plain = raw.replace(/'\d+$/, '');
    if (!/^0x[0-9a-f]+$/i.test(plain)) return plain;
    return nameAt(map, BigInt(plain)) ?? 'JIT code (unnamed)';
  };
  const out: Inclusive = { self: new Map(), calls: new Map() };
  const add = (into: Map<string, number>, key: string, cost: number) =>
    into.set(key, (into.get(key) ?? 0) + cost);
  let fn = '';
  let callee = '';
  let afterCalls = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {
      const cost = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (!afterCalls) add(out.self, fn, cost);
      else if (callee !== fn) add(out.calls, fn, cost);
      afterCalls = false;
    } else if (line.startsWith('fn=')) fn = resolve(line.slice(3));
    else if (line.startsWith('cfn=')) callee = resolve(line.slice(4));
    else if (line.startsWith('calls=')) afterCalls = true;
  }
  return out;
}

function main(): void {
  const [dir, prefix, countArg, topArg, filter = ''] = process.argv.slice(2);
  if (dir === undefined || prefix === undefined)
    throw new Error(
      'usage: tsx bench/callgrind-inclusive.ts <dir> <prefix> [requests] [top] [filter]',
    );
  const file = readdirSync(dir).find((f) => f.startsWith(`${prefix}.`) && f.endsWith('.1-01'));
  if (file === undefined) throw new Error(`no ${prefix}.<pid>.1-01 dump in ${dir}`);
  const dump = join(dir, file);
  const costs = readInclusive(dump, readCodeMap(dump.replace(/\.1-01$/, '.perf.map')));
  const per = Number(countArg ?? 4000);
  const keys = new Set([...costs.self.keys(), ...costs.calls.keys()]);
  const rows = [...keys]
    .filter((key) => key.includes(filter))
    .map((key) => {
      const self = costs.self.get(key) ?? 0;
      return { key, self, inclusive: self + (costs.calls.get(key) ?? 0) };
    })
    .sort((a, b) => b.inclusive - a.inclusive)
    .slice(0, Number(topArg ?? 40));
  const fmt = (n: number): string =>
    Math.round(n / per)
      .toLocaleString('en')
      .padStart(9);
  const lines = rows.map((r) => `${fmt(r.inclusive)} ${fmt(r.self)}  ${r.key}`);
  process.stdout.write(
    `${'incl/req'.padStart(9)} ${'self/req'.padStart(9)}  function\n${lines.join('\n')}\n`,
  );
}

main();
