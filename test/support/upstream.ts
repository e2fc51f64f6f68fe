/**
 * Real loopback upstreams for proxy tests (node:http and `ws` on 127.0.0.1,
 * port 0): what the gateway forwards to, and what it must survive. Every
 * server counts the requests it saw and how they ended, so a test can ask
 * the upstream — not the gateway — whether a request was aborted.
 */
import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';

export interface Upstream {
  /** `http://127.0.0.1:<port>`: the route's `upstream`. */
  url: string;
  /** Stops listening and closes every connection still open. */
  close(): Promise<void>;
}

/** What an upstream saw of one request. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** Bytes of body received (all of them once `complete`). */
  bodyLength: number;
  /** sha256 (hex) of the body; set once the body ended. */
  bodySha256?: string;
  /** Trailers the client sent after a chunked body. */
  trailers: NodeJS.Dict<string>;
  /** The body arrived in full. */
  complete: boolean;
}

/** How the requests an upstream received have ended so far. */
export interface RequestCounts {
  /** Requests whose head arrived. */
  received: number;
  /** Requests neither answered in full nor closed yet. */
  open: number;
  /** Requests whose connection closed before the response finished. */
  aborted: number;
  /** Requests answered in full. */
  finished: number;
}

export interface CountingUpstream extends Upstream {
  counts: RequestCounts;
  requests: RecordedRequest[];
}

/** Answers one request; `record` fills in as the body arrives. */
export type UpstreamHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  record: RecordedRequest,
) => void;

/**
 * An upstream that records and counts every request and hands it to
 * `handler`. The body is always read (hashed, never kept), so the handler
 * decides only when and how to answer.
 */
export async function startUpstream(handler: UpstreamHandler): Promise<CountingUpstream> {
  const counts: RequestCounts = { received: 0, open: 0, aborted: 0, finished: 0 };
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    counts.received += 1;
    counts.open += 1;
    const record: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      bodyLength: 0,
      trailers: {},
      complete: false,
    };
    requests.push(record);
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      counts.open -= 1;
      if (res.writableFinished) counts.finished += 1;
      else counts.aborted += 1;
    };
    // 'close' comes once the response finished or the connection went away.
    res.on('close', settle);
    const hash = createHash('sha256');
    req.on('data', (chunk: Buffer) => {
      record.bodyLength += chunk.length;
      hash.update(chunk);
    });
    req.on('end', () => {
      record.bodySha256 = hash.digest('hex');
      record.trailers = req.trailers;
      record.complete = true;
    });
    req.on('error', () => {});
    handler(req, res, record);
  });
  return { ...(await listen(server)), counts, requests };
}

/**
 * Answers every request, once its body has ended, with 200 and JSON
 * `{method, url, headers, bodyLength, bodySha256, trailers}`.
 */
export function startEchoUpstream(): Promise<CountingUpstream> {
  return startUpstream((req, res, record) => {
    req.on('end', () => {
      const body = JSON.stringify({
        method: record.method,
        url: record.url,
        headers: record.headers,
        bodyLength: record.bodyLength,
        bodySha256: record.bodySha256,
        trailers: record.trailers,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
}

/**
 * Answers `200 slow` after `delayMs`, or never when `delayMs` is undefined
 * (the request stays open until the caller's side closes it).
 */
export function startSlowUpstream(delayMs?: number): Promise<CountingUpstream> {
  return startUpstream((_req, res) => {
    if (delayMs === undefined) return;
    const timer = setTimeout(
      () => res.writeHead(200, { 'content-type': 'text/plain' }).end('slow'),
      delayMs,
    );
    res.on('close', () => clearTimeout(timer));
  });
}

/**
 * Breaks the connection: `on-request` destroys the socket as soon as a
 * request head arrives (no response at all); `mid-response` sends a 200 head
 * announcing `content-length: 1000000` and 1000 bytes of it, then destroys the
 * socket.
 */
export function startBreakingUpstream(
  mode: 'on-request' | 'mid-response',
): Promise<CountingUpstream> {
  return startUpstream((req, res) => {
    if (mode === 'on-request') {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000000' });
    res.write(Buffer.alloc(1000, 0x61), () => {
      // Give the bytes a moment to leave before the connection goes.
      setTimeout(() => req.socket.destroy(), 50);
    });
  });
}

/** A port that refuses connections: bound once, then released. */
export async function refusedUpstream(): Promise<Upstream> {
  const server = createServer();
  const { url, close } = await listen(server);
  await close();
  return { url, close: async () => {} };
}

export interface WebSocketUpstream extends Upstream {
  /** The headers of every upgrade request that reached the upstream, in order. */
  upgrades: IncomingHttpHeaders[];
  /** The URL (path and query) of every upgrade request, in order. */
  upgradeUrls: string[];
  /** Resets (TCP RST) every open WebSocket connection, as a crashing upstream would. */
  resetAll(): void;
}

/** A `ws` server that echoes every message back (text stays text). */
export async function startWebSocketUpstream(): Promise<WebSocketUpstream> {
  const upgrades: IncomingHttpHeaders[] = [];
  const upgradeUrls: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('upgrade required');
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket, req) => {
    upgrades.push(req.headers);
    upgradeUrls.push(req.url ?? '');
    sockets.add(req.socket);
    socket.on('close', () => sockets.delete(req.socket));
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  const listening = await listen(server);
  return {
    url: listening.url,
    upgrades,
    upgradeUrls,
    resetAll() {
      for (const socket of sockets) socket.resetAndDestroy();
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await listening.close();
    },
  };
}

function listen(server: Server): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * Polls `condition` every 20 ms until it holds; rejects after `timeoutMs`
 * (counters move on the upstream's own schedule, so tests wait, never sleep).
 */
export async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
