/**
 * Clients that hang up while their request is in flight leave no connections
 * behind at the upstream. undici aborts the upstream request by destroying
 * its connection, then opens a new one for the aborted request and never uses
 * it (nodejs/undici#5845): thirty hang-ups gave thirty idle connections,
 * kept for undici's keep-alive time (4 s). The gateway closes a connection
 * that has carried no request 100 ms after opening — and never one that
 * carries a request whose body has not begun yet: undici writes the head of
 * such a request only with its body's first chunk, so the connection has
 * sent nothing (a client waiting for `100 Continue`, a slow upload). Closing
 * it was a 502: the flaky `Expect: 100-continue` case of
 * upstream-failures.test.ts.
 */
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startEchoUpstream, waitFor, type CountingUpstream } from '../support/upstream.js';

const HANG_UPS = 30;

let fx: IdentityFixture;
let upstream: Server;
/** Only the late-body case uses it: its first request opens the pool's first connection. */
let echo: CountingUpstream;
const open = new Set<Socket>();
let received = 0;
/** When a connection last opened or closed at the upstream. */
let lastChange = Date.now();
let token: string;

beforeAll(async () => {
  // Answers only the last request of each kind; hung-up ones are never answered.
  upstream = createServer((req, res) => {
    received += 1;
    if (req.url === '/slow/ok') res.end('ok');
  });
  upstream.keepAliveTimeout = 60_000;
  upstream.on('connection', (socket: Socket) => {
    open.add(socket);
    lastChange = Date.now();
    socket.on('close', () => {
      open.delete(socket);
      lastChange = Date.now();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as AddressInfo).port;
  echo = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/slow', upstream: `http://127.0.0.1:${port}`, timeoutMs: 30_000 },
      { prefix: '/late', upstream: echo.url, timeoutMs: 30_000 },
    ],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
});
afterAll(async () => {
  await fx.close();
  await echo?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

/** A raw client that sends one request and hangs up once the upstream has it. */
function hangingClient(): Socket {
  const { hostname, port } = new URL(fx.gw.url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  socket.write(
    `GET /slow/wait HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
  );
  return socket;
}

it(`${HANG_UPS} clients hanging up mid-request leave no idle connection at the upstream`, async () => {
  const clients = Array.from({ length: HANG_UPS }, hangingClient);
  await waitFor(() => received === HANG_UPS, 10_000);
  expect(open.size).toBe(HANG_UPS);
  for (const client of clients) client.destroy();

  // The aborted requests' connections close at once; undici's stray new ones
  // must close too, well before undici's 4 s keep-alive, and stay closed.
  await waitFor(() => open.size === 0 && Date.now() - lastChange > 500, 2_500).catch(() => {});
  expect(open.size).toBe(0);
  expect(received).toBe(HANG_UPS);

  // The pool still works.
  const res = await fetch(`${fx.gw.url}/slow/ok`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('ok');
});

/** Later than the closer's 100 ms: the body's first byte comes after the check. */
const BODY_DELAY_MS = 300;

/**
 * A POST whose head goes at once and whose body (`hello`) follows
 * {@link BODY_DELAY_MS} later, as from a client on a slow link or one that
 * waits for `100 Continue` before it sends.
 */
function lateBodyPost(path: string): Promise<{ status: number | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${fx.gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-length': '5' },
      agent: false,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.flushHeaders();
    void delay(BODY_DELAY_MS).then(() => req.end('hello'));
  });
}

it('a request whose body begins after 100 ms keeps its new upstream connection and arrives whole', async () => {
  const { status, body } = await lateBodyPost('/late/upload');
  expect(status).toBe(200);
  expect(JSON.parse(body)).toMatchObject({ method: 'POST', url: '/late/upload', bodyLength: 5 });
  await waitFor(() => echo.counts.open === 0, 1_000);
  expect(echo.counts).toMatchObject({ received: 1, finished: 1, aborted: 0 });
});

it("a request with a late body right after a hang-up (on undici's stray connection) is answered", async () => {
  const before = received;
  const client = hangingClient();
  await waitFor(() => received === before + 1, 5_000);
  // The abort destroys that connection; undici opens its stray one at once,
  // and the next request may be written on it.
  client.destroy();
  const { status, body } = await lateBodyPost('/slow/ok');
  expect(status).toBe(200);
  expect(body).toBe('ok');
  expect(received).toBe(before + 2);
});
