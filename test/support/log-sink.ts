/** A pino destination that keeps the gateway's JSON log lines for a test to read. */
import { Writable } from 'node:stream';

export type Line = Record<string, unknown>;

export function lineSink(): { stream: Writable; lines: Line[] } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n'))
        if (text.trim() !== '') lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { stream, lines };
}
