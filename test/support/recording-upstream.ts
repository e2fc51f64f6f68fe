/**
 * A recording upstream for the hostile-framing suite: a node:http server
 * (llhttp, as strict as Node gets) that logs every request it parses, on
 * every connection, in order, and answers each once its body ended with 200
 * and JSON naming what it saw — the connection, the method, the URL, the body
 * and every header (the identity ones among them). A client that receives an
 * answer can so tell whose request it answers.
 *
 * It can also misbehave on request, by the header `x-misbehave`:
 * - `double`: answers, then at once sends a second response nobody asked for;
 * - `idle`: answers, and keeps the connection for {@link RecordingUpstream.sendStray},
 *   which sends a response nobody asked for while the connection idles.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Upstream } from './upstream.js';

/** One request as the upstream parsed it. */
export interface ParsedRequest {
  /** 1, 2, … in the order the upstream accepted connections. */
  connection: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as text (latin1, so every byte survives). */
  body: string;
  trailers: NodeJS.Dict<string>;
}

/** The JSON body of every normal answer. */
export type RecordedAnswer = ParsedRequest;

/** What a stray response (one no request asked for) carries. */
export const STRAY_BODY = '{"stray":"a response to no request"}';
const STRAY_RESPONSE =
  'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n' +
  `content-length: ${STRAY_BODY.length}\r\nx-stray: yes\r\n\r\n${STRAY_BODY}`;

export interface RecordingUpstream extends Upstream {
  /** Every request parsed, every connection, in order. */
  requests: ParsedRequest[];
  /** Connections accepted and connections closed so far. */
  connections: { opened: number; closed: number; closedIds: number[] };
  /** Writes a stray response on the connection of the last `x-misbehave: idle` request. */
  sendStray(): void;
}

export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const requests: ParsedRequest[] = [];
  const connections = { opened: 0, closed: 0, closedIds: [] as number[] };
  const ids = new WeakMap<Socket, number>();
  let idle: Socket | undefined;
  const server = createServer((req, res) => {
    const record: ParsedRequest = {
      connection: ids.get(req.socket) ?? 0,
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: '',
      trailers: {},
    };
    requests.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    req.on('end', () => {
      record.body = Buffer.concat(chunks).toString('latin1');
      record.trailers = req.trailers;
      const body = JSON.stringify(record);
      const socket = req.socket;
      const misbehave = req.headers['x-misbehave'];
      res
        .writeHead(200, {
          'content-type': 'application/json',
          // writeHead sends the head at once: without a length the body would go chunked.
          'content-length': Buffer.byteLength(body),
        })
        .end(body, () => {
          if (misbehave === 'double') socket.write(STRAY_RESPONSE);
          if (misbehave === 'idle') idle = socket;
        });
    });
  });
  server.on('connection', (socket: Socket) => {
    const id = ++connections.opened;
    ids.set(socket, id);
    socket.on('close', () => {
      connections.closed += 1;
      connections.closedIds.push(id);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections,
    sendStray() {
      if (idle === undefined) throw new Error('no x-misbehave: idle request was answered yet');
      idle.write(STRAY_RESPONSE);
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
