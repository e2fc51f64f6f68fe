/**
 * Reading a callgrind dump of `npm run bench:instructions`: self cost per
 * function (JIT code named from V8's `--perf-basic-prof` map when there is
 * one), each function in a group (the gateway's files, Node, undici, V8,
 * GC). GC is told apart because it is lumpy: whether a full collection of
 * the gateway's ~26 MB heap falls in the counted window moves its count by
 * up to ±50k per request, where everything else repeats within ~1 %.
 */
import { readFileSync } from 'node:fs';

export interface Costs {
  byFunction: Map<string, number>;
  total: number;
}

/** A perf map: JIT code ranges, sorted by start, each with V8's name for it. */
export interface CodeMap {
  starts: bigint[];
  ends: bigint[];
  names: string[];
}

export function readCodeMap(file: string): CodeMap {
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

export function nameAt(map: CodeMap, address: bigint): string | undefined {
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
export function readDump(file: string, map: CodeMap): Costs {
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

export const GC_GROUP = 'GC, write barrier and allocation (V8)';
/** V8's collectors, what they visit and move, its allocator and its write barrier. */
const GC_NAMES =
  /Heap|Scaveng|MarkCompact|Marking|Sweep|Evacuat|MinorMC|GC|Remembered|SlotSet|Visitor|MemoryChunk|PagedSpace|NewSpace|SemiSpace|Allocat|IterateObjectCache|IterateShared|OnMoveEvent|SizeFromMap|RelocIterator|ActiveSystemPages|BodyDescriptor|Worklist|LiveObject|FreeList|Pretenuring|CompactPrototypeTransition|FlushedBytecode|UsedInstanceSize|popcount|RecordWrite/;

/** The group a function's cost is reported under. */
export function groupOf(key: string): string {
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

/** Instructions of a dump in all, and in {@link GC_GROUP}. */
export function gcShare(file: string): { total: number; gc: number } {
  const costs = readDump(file, readCodeMap(''));
  let gc = 0;
  for (const [key, cost] of costs.byFunction) if (groupOf(key) === GC_GROUP) gc += cost;
  return { total: costs.total, gc };
}
