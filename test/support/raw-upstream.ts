/**
 * A raw TCP upstream on 127.0.0.1 for tests that read the gateway's bytes as
 * they travel: it records each whole request (its head, and a body framed by
 * `Content-Length` or chunked) as latin1 text, then writes its answer back.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface RawUpstream {
  url: string;
  /** Bytes of each request (head and body) received, in order, as latin1 text. */
  received: string[];
  close(): Promise<void>;
}

/** Starts the upstream; `answer` gives the raw bytes (latin1) to write back for a request. */
export async function startRawUpstream(answer: (request: string) => string): Promise<RawUpstream> {
  const received: string[] = [];
  const server = createServer((socket) => serve(socket, received, answer));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The length of the whole request at the start of `buffered`, or undefined until it has all come. */
function requestLength(buffered: string): number | undefined {
  const end = buffered.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buffered.slice(0, end);
  const length = /\r\ncontent-length: (\d+)/i.exec(head);
  let total = end + 4;
  if (length) total += Number(length[1]);
  else if (/\r\ntransfer-encoding: chunked/i.test(head)) {
    const last = buffered.indexOf('\r\n0\r\n\r\n', end);
    if (last < 0) return undefined;
    total = last + 7;
  }
  return buffered.length < total ? undefined : total;
}

function serve(socket: Socket, received: string[], answer: (request: string) => string): void {
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    for (
      let total = requestLength(buffered);
      total !== undefined;
      total = requestLength(buffered)
    ) {
      const request = buffered.slice(0, total);
      buffered = buffered.slice(total);
      received.push(request);
      socket.write(answer(request), 'latin1');
    }
  });
  socket.on('error', () => socket.destroy());
}
