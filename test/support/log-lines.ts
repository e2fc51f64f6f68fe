/**
 * Finding a gateway's log line once it is written: lines are written after
 * the answer, so a test waits (up to two seconds) for the first that matches.
 */
import type { Line } from './log-sink.js';
import { waitFor } from './upstream.js';

/** The first of `lines` that matches, waited for; throws after two seconds without one. */
export async function lineWhere(
  lines: Line[] | (() => Line[]),
  match: (line: Line) => boolean,
): Promise<Line> {
  const read = typeof lines === 'function' ? lines : () => lines;
  let found: Line | undefined;
  await waitFor(() => {
    found = read().find(match);
    return found !== undefined;
  }, 2000);
  return found as Line;
}

/** The line `msg` of the request `requestId`, waited for. */
export function lineOf(
  lines: Line[],
  requestId: string | null | undefined,
  msg = 'request',
): Promise<Line> {
  return lineWhere(lines, (l) => l.msg === msg && l.requestId === requestId);
}
