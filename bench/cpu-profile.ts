/**
 * Reading a V8 CPU profile (`node --cpu-prof`) as "µs of CPU per request, by
 * component": each sample's own frame (self time, not callers) is filed under
 * the code it belongs to — Node's HTTP, its streams and sockets, an npm
 * package, the gateway's own `dist/`, the syscalls behind socket writes, GC.
 * Only the samples in a time window are counted, so start-up (module loading,
 * JIT warm-up) stays out of a steady-state figure.
 */
import { readFileSync } from 'node:fs';

/** The parts of the `.cpuprofile` JSON this reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A window of the profile, in µs back from its end (when the process stopped). */
export interface Window {
  fromEndUs: number;
  toEndUs: number;
}

/** µs of CPU per request by component. */
export type ProfileSummary = Map<string, number>;

/** Native frames that are the socket's write syscalls (on loopback: the whole TCP path to the reader). */
const SOCKET_WRITES = new Set([
  'writev',
  'writeBuffer',
  'writeLatin1String',
  'writeUtf8String',
  'writeAsciiString',
  'writeUcs2String',
]);

export function summarizeProfile(file: string, window: Window, requests: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const from = profile.endTime - window.fromEndUs;
  const to = profile.endTime - window.toEndUs;
  const byComponent: ProfileSummary = new Map();
  let at = profile.startTime;
  // timeDeltas[i] is the time from sample i-1 to sample i: the time sample i stands for.
  for (let i = 0; i < profile.samples.length; i++) {
    const spent = profile.timeDeltas[i] ?? 0;
    at += spent;
    if (at < from || at > to) continue;
    const frame = frames.get(profile.samples[i] as number);
    if (frame === undefined) continue;
    const component = componentOf(frame.functionName, frame.url);
    if (component === undefined) continue;
    byComponent.set(component, (byComponent.get(component) ?? 0) + spent / requests);
  }
  return byComponent;
}

/** The component a frame's own time is filed under; undefined for idle time. */
export function componentOf(functionName: string, url: string): string | undefined {
  if (url === '') {
    if (functionName === '(idle)') return undefined;
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (SOCKET_WRITES.has(functionName)) return 'socket writes (syscalls)';
    if (functionName === '(program)') return 'V8 and native, unattributed';
    return 'other native (HTTP parser, regexps, ...)';
  }
  if (url.startsWith('node:')) {
    if (/^node:_http_/.test(url) || url === 'node:http') return 'Node HTTP (server, client, agent)';
    if (url === 'node:events') return 'Node events';
    if (/^node:(net|internal\/streams\/|internal\/stream_base_commons)/.test(url))
      return 'Node streams and sockets';
    if (url === 'node:internal/timers' || url === 'node:timers') return 'Node timers';
    return 'Node, other';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg !== null) return `npm: ${pkg[1]}`;
  const own = /\/dist\/(.+)\.js$/.exec(url);
  if (own !== null) return `gateway: ${own[1]}`;
  return 'other script';
}
