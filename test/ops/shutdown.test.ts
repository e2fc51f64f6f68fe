/**
 * Issue 5, graceful shutdown, against the built process: on SIGTERM readiness
 * turns 503 first, new connections stop, an in-flight proxied request and an
 * open proxied WebSocket get `shutdown.drainSeconds` to finish, and the
 * process exits 0. What is still running past the drain time is cut.
 */
import { createHash } from 'node:crypto';
import { request, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bearer } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
  signingKeyFile,
} from '../support/gateway-process.js';
import { tokenFor } from '../support/identity-fixture.js';
import {
  startSlowUpstream,
  startUpstream,
  startWebSocketUpstream,
  waitFor,
  type CountingUpstream,
  type WebSocketUpstream,
} from '../support/upstream.js';

/** The body of the slow answer: large enough to arrive in many chunks. */
const BODY = Buffer.alloc(256 * 1024, 'report line\n');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let websockets: WebSocketUpstream;
beforeAll(async () => {
  websockets = await startWebSocketUpstream();
});
afterEach(() => stopGatewayProcesses());
afterAll(async () => {
  await websockets?.close();
});

function configText(drainSeconds: number, slowUpstream: string): string {
  return `
listen: { host: 127.0.0.1, port: 0 }
admin: { host: 127.0.0.1, port: 0 }
seed: ./seed.yaml
tokens: { keys: ./keys, ttlSeconds: 600 }
passwords: { bcryptCost: 4 }
shutdown: { drainSeconds: ${drainSeconds} }
routes:
  - { prefix: /slow, upstream: "${slowUpstream}" }
  - { prefix: /live, upstream: "${websockets.url}" }
`;
}

async function startGateway(
  drainSeconds: number,
  slowUpstream: string,
): Promise<{ gw: GatewayProcess; adminUrl: string; token: string }> {
  const gw = await startGatewayProcess(configText(drainSeconds, slowUpstream), {
    files: { 'seed.yaml': SEED_YAML, ...signingKeyFile() },
  });
  if (gw.adminUrl === undefined) throw new Error(`no admin address logged:\n${gw.output()}`);
  const token = (await tokenFor(gw.url, OPERATOR, TENANT)).access_token;
  return { gw, adminUrl: gw.adminUrl, token };
}

/** An upstream that holds every request until `release()`, then answers 200 with BODY. */
async function startGatedUpstream(): Promise<CountingUpstream & { release(): void }> {
  const held: ServerResponse[] = [];
  const upstream = await startUpstream((_req, res) => held.push(res));
  return {
    ...upstream,
    release() {
      for (const res of held.splice(0)) {
        res.writeHead(200, {
          'content-type': 'text/plain',
          'content-length': String(BODY.length),
        });
        res.end(BODY);
      }
    },
  };
}

/** One GET on a connection of its own; rejects when the connection breaks. */
function get(url: string, token: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: bearer(token) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether a fresh TCP connection to `url` is refused. */
function refusesConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** Polls `probe` every 25 ms until it yields a value; fails after `timeoutMs`. */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function openWebSocket(url: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers: { authorization: bearer(token) } });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`upgrade refused: ${res.statusCode}`)),
    );
  });
  return ws;
}

/** Sends `text` and resolves with the next message (the upstream echoes). */
function echo(ws: WebSocket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no echo of ${text}`)), 5000);
    ws.once('message', (data: Buffer) => {
      clearTimeout(timer);
      resolve(data.toString());
    });
    ws.send(text);
  });
}

it('SIGTERM drains: readiness 503, no new connections, the slow request and the WebSocket finish, exit 0', async () => {
  const upstream = await startGatedUpstream();
  try {
    const { gw, adminUrl, token } = await startGateway(5, upstream.url);
    expect((await fetch(`${adminUrl}/readyz`)).status).toBe(200);

    const ws = await openWebSocket(`${gw.url.replace(/^http:/, 'ws:')}/live/chat`, token);
    expect(await echo(ws, 'before')).toBe('before');
    const slow = get(`${gw.url}/slow/report`, token);
    await waitFor(() => upstream.counts.open === 1, 5000);

    const signalledAt = Date.now();
    gw.signal('SIGTERM');

    // Readiness fails first, while work is still in flight (the admin listener closes last).
    const readiness = await eventually(async () => {
      const res = await fetch(`${adminUrl}/readyz`);
      return res.status === 503 ? await res.json() : undefined;
    });
    expect(readiness).toEqual({ status: 'not ready', reasons: ['shutting down'], store: 'ok' });
    // The main listener takes no new connections.
    await eventually(async () => ((await refusesConnections(gw.url)) ? true : undefined));

    // The open WebSocket keeps working during the drain.
    expect(await echo(ws, 'after SIGTERM')).toBe('after SIGTERM');

    // The in-flight request completes, in full.
    upstream.release();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(BODY.length);
    expect(sha256(res.body)).toBe(sha256(BODY));
    expect(upstream.counts).toMatchObject({ received: 1, finished: 1, aborted: 0 });

    // With the request done, the WebSocket alone keeps the process draining.
    expect(await echo(ws, 'still open')).toBe('still open');
    const wsClosed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.close(1000, 'done');
    expect(await wsClosed).toBe(1000);

    expect(await gw.exited).toEqual({ code: 0, signal: null });
    // Everything finished early: the process did not sit out the 5 s drain.
    expect(Date.now() - signalledAt).toBeLessThan(5000);
    expect(gw.output()).not.toMatch(/shutdown failed/);
  } finally {
    await upstream.close();
  }
});

it('SIGTERM: a request and a WebSocket still open past drainSeconds are cut, and the process still exits 0', async () => {
  const upstream = await startSlowUpstream(); // never answers
  try {
    const { gw, adminUrl, token } = await startGateway(1, upstream.url);
    const stuck = get(`${gw.url}/slow/forever`, token).then(
      (res) => ({ status: res.status, body: res.body.toString() }),
      (err: Error) => ({ error: err.message }),
    );
    await waitFor(() => upstream.counts.open === 1, 5000);
    const ws = await openWebSocket(`${gw.url.replace(/^http:/, 'ws:')}/live/idle`, token);
    const wsClosed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));

    const signalledAt = Date.now();
    gw.signal('SIGTERM');
    const readiness = await eventually(async () => {
      const res = await fetch(`${adminUrl}/readyz`);
      return res.status === 503 ? res.status : undefined;
    });
    expect(readiness).toBe(503);

    expect(await gw.exited).toEqual({ code: 0, signal: null });
    const elapsed = Date.now() - signalledAt;
    expect(elapsed).toBeGreaterThanOrEqual(1000); // the drain time was given
    expect(elapsed).toBeLessThan(6000); // and not much more

    // The client saw the request cut (a broken connection or a 502), never a 200.
    const outcome = await stuck;
    if ('status' in outcome) expect(outcome.status).toBe(502);
    else expect(outcome.error).toMatch(/socket hang up|ECONNRESET|aborted/);
    await waitFor(() => upstream.counts.aborted === 1, 5000);
    expect(upstream.counts.finished).toBe(0);
    // The WebSocket the client never closed was closed for it (going away, or cut).
    expect([1001, 1006]).toContain(await wsClosed);
  } finally {
    await upstream.close();
  }
});
