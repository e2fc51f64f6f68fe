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
 * (defaults 4000 and 40). The dir holds `bare-undici.<pid>.1-01` and
 * `gateway.<pid>.1-01` (main thread, first dump) and their `.perf.map`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Costs {
  byFunction: Map<string, number>;
  total: number;
}

/** A perf map: JIT code ranges, sorted by start, each with V8's name for it. */
interface CodeMap {
  starts: bigint[];
  ends: bigint[];
  names: string[];
}

function readCodeMap(file: string): CodeMap {
  const entries: { start: bigint; end: bigint; name: string }[] = [];
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { starts: [], ends: [], names: [] };
  }
  for (const line of text.split('\n')) {
    const first = line.indexOf(' ');
    const second = line.indexOf(' ', first + 1);
    if (first < 0 || second < 0) continue;
    const start = BigInt(`0x${line.slice(0, first)}`);
    const size = BigInt(`0x${line.slice(first + 1, second)}`);
    entries.push({ start, end: start + size, name: line.slice(second + 1) });
  }
  // A later entry for the same address is newer code: it wins (stable sort keeps the order).
  entries.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return {
    starts: entries.map((e) => e.start),
    ends: entries.map((e) => e.end),
    names: entries.map((e) => e.name),
  };
}

function nameAt(map: CodeMap, address: bigint): string | undefined {
  let lo = 0;
  let hi = map.starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((map.starts[mid] as bigint) <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // Walk back over entries starting at or before the address: the latest one covering it.
  for (let i = found; i >= 0 && i > found - 64; i--) {
    if (address < (map.ends[i] as bigint)) return map.names[i];
  }
  return undefined;
}

/** Self cost per function (object file + function name) of a callgrind dump. */
function readDump(file: string, map: CodeMap): Costs {
  const names = { ob: new Map<string, string>(), fn: new Map<string, string>() };
  const byFunction = new Map<string, number>();
  let ob = '';
  let fn = '';
  let key = '';
  let afterCalls = false;
  let total = 0;
  const resolve = (kind: 'ob' | 'fn', value: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (m === null) return value;
    const [, id, name] = m as unknown as [string, string, string | undefined];
    if (name !== undefined) names[kind].set(id, name);
    return names[kind].get(id) ?? value;
  };
  const rekey = (): void => {
    // `'2`: callgrind's mark of a recursion level; one function all the same.
    let name = fn.replace(/'\d+$/, '');
    if (/^0x[0-9a-f]+$/i.test(name)) name = nameAt(map, BigInt(name)) ?? 'JIT code (unnamed)';
    key = `${name}\t${ob}`;
  };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const c = line.charCodeAt(0);
    const isCost = (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42; // digit + - *
    if (isCost) {
      if (afterCalls) {
        afterCalls = false; // the call's inclusive cost: not this function's own
        continue;
      }
      const cost = Number(line.slice(line.lastIndexOf(' ') + 1));
      byFunction.set(key, (byFunction.get(key) ?? 0) + cost);
      total += cost;
      continue;
    }
    if (line.startsWith('ob=')) ob = resolve('ob', line.slice(3));
    else if (line.startsWith('fn=')) {
      fn = resolve('fn', line.slice(3));
      rekey();
    } else if (line.startsWith('cob=')) resolve('ob', line.slice(4));
    else if (line.startsWith('cfn=')) resolve('fn', line.slice(4));
    else if (line.startsWith('calls=')) afterCalls = true;
  }
  return { byFunction, total };
}

const GC_GROUP = 'GC, write barrier and allocation (V8)';
/** V8's collectors, what they visit and move, its allocator and its write barrier. */
const GC_NAMES =
  /Heap|Scaveng|MarkCompact|Marking|Sweep|Evacuat|MinorMC|GC|Remembered|SlotSet|Visitor|MemoryChunk|PagedSpace|NewSpace|SemiSpace|Allocat|IterateObjectCache|IterateShared|OnMoveEvent|SizeFromMap|RelocIterator|ActiveSystemPages|BodyDescriptor|Worklist|LiveObject|FreeList|Pretenuring|CompactPrototypeTransition|FlushedBytecode|UsedInstanceSize|popcount|RecordWrite/;

/** The group a function's cost is reported under. */
function groupOf(key: string): string {
  const [name = '', ob = ''] = key.split('\t');
  const dist = /\/dist\/(\S+?\.js)/.exec(name);
  if (dist !== null) return `gateway ${dist[1]}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(name);
  if (pkg !== null) return pkg[1] === 'undici' ? 'undici' : `package ${pkg[1]}`;
  if (/node:(_http_|internal\/http|http)/.test(name)) return "Node's http (JS)";
  if (/node:/.test(name)) return "Node's streams, net, events, timers (JS)";
  if (GC_NAMES.test(name)) return GC_GROUP;
  if (/^Builtins_/.test(name)) return 'V8 builtins, interpreter, ICs, regexp code';
  if (
    /^(Builtin|BytecodeHandler|Handler|Stub|RegExp|CallIC|LoadIC|StoreIC|KeyedLoadIC|KeyedStoreIC):/.test(
      name,
    )
  )
    return 'V8 builtins, interpreter, ICs, regexp code';
  if (/^JIT code|^(JS|LazyCompile|Function|Script):/.test(name)) return 'V8 JIT code, other';
  if (/llhttp|http_parser|node::http_parser/i.test(name)) return "Node's HTTP parser (C++)";
  if (/v8::|Runtime_|Builtins_/.test(name)) return 'V8 runtime (C++)';
  if (/node::|uv_|uv__/.test(name)) return 'Node and libuv (C++)';
  if (/libc|ld-linux/.test(ob)) return 'libc';
  return `other (${ob.split('/').pop() ?? '?'})`;
}

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
  const [dir, countArg, topArg] = process.argv.slice(2);
  if (dir === undefined)
    throw new Error('usage: tsx bench/callgrind-breakdown.ts <dir> [requests] [top]');
  const per = Number(countArg ?? 4000);
  const top = Number(topArg ?? 40);
  const gateway = load(dir, 'gateway');
  const undici = load(dir, 'bare-undici');
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
