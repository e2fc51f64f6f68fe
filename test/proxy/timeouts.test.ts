/**
 * Issue 20: timeouts as settings. A body that keeps moving is never cut,
 * however long it takes; a body that stops is given up on after an idle
 * period, on the client's side (`server.requestBodyIdleTimeoutMs`: 408, and
 * the upstream request is aborted) and on the upstream's
 * (`routes[].bodyIdleTimeoutMs`: the transfer is cut); idle keep-alive
 * connections close after `server.keepAliveTimeoutMs`, not Node's fixed 5 s.
 * Limits are shortened so the test takes seconds: the same code paths run
 * with the defaults (60 s, 300 s, 65 s).
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, bearer, startTestGateway } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startEchoUpstream, startUpstream, waitFor } from '../support/upstream.js';

const BODY_IDLE_MS = 1000;
const KEEP_ALIVE_MS = 1500;
const UPSTREAM_BODY_IDLE_MS = 600;

const s = fixtureSuite(
  {
    echo: startEchoUpstream,
    stalling: () =>
      // A head and one chunk, then silence: the response never ends.
      startUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first chunk\n');
      }),
    trickling: () =>
      // A chunk every 200 ms for 2 s, then the end: slow, never silent for long.
      startUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const timer = setInterval(() => {
          sent += 1;
          if (sent < 10) res.write(`chunk ${sent}\n`);
          else {
            clearInterval(timer);
            res.end('last\n');
          }
        }, 200);
        res.on('close', () => clearInterval(timer));
      }),
  },
  ({ echo, stalling, trickling }) => ({
    routes: [
      { prefix: '/echo', upstream: echo.url },
      { prefix: '/stall', upstream: stalling.url, bodyIdleTimeoutMs: UPSTREAM_BODY_IDLE_MS },
      { prefix: '/trickle', upstream: trickling.url, bodyIdleTimeoutMs: UPSTREAM_BODY_IDLE_MS },
    ],
    server: { requestBodyIdleTimeoutMs: BODY_IDLE_MS, keepAliveTimeoutMs: KEEP_ALIVE_MS },
  }),
  { token: true },
);
let auth: string;
beforeAll(() => {
  auth = bearer(s.token);
});

/** A raw connection to `url` and everything it receives until it closes. */
async function openRaw(
  url: string,
): Promise<{ socket: Socket; text: () => string; closed: Promise<void> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, text: () => received, closed };
}

/** Sends a chunked POST whose body is `chunks` pieces of 16 bytes, `gapMs` apart. */
async function trickleUpload(
  url: string,
  path: string,
  chunks: number,
  gapMs: number,
  authorization = auth,
): Promise<string> {
  const raw = await openRaw(url);
  raw.socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${authorization}\r\n` +
      'transfer-encoding: chunked\r\nconnection: close\r\n\r\n',
  );
  for (let i = 0; i < chunks; i++) {
    if (raw.socket.destroyed) break;
    raw.socket.write(`10\r\n${'x'.repeat(15)}\n\r\n`);
    await delay(gapMs);
  }
  if (!raw.socket.destroyed) raw.socket.write('0\r\n\r\n');
  await raw.closed;
  return raw.text();
}

describe('a request body that keeps moving is never cut', () => {
  it('an upload of 16 bytes every 600 ms for 6 s passes a 1 s body idle timeout whole', async () => {
    const before = s.up.echo.requests.length;
    const answer = await trickleUpload(s.gw.url, '/echo/upload', 10, 600);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const seen = s.up.echo.requests[before];
    expect(seen?.complete).toBe(true);
    expect(seen?.bodyLength).toBe(160);
  }, 20_000);

  it('the same upload is cut by a whole-request cap (limits.requestTimeoutMs), which is what the idle timeout replaces', async () => {
    const capped = await startTestGateway({
      ...s.fx.config,
      routes: [{ prefix: '/echo', upstream: s.up.echo.url }],
      limits: { requestTimeoutMs: 2000 },
      server: { requestBodyIdleTimeoutMs: BODY_IDLE_MS, headersTimeoutMs: 1000 },
    });
    try {
      // A store of its own: a token of this gateway.
      const own = bearer((await tokenFor(capped.url, ALICE, 'acme')).access_token);
      const answer = await trickleUpload(capped.url, '/echo/upload', 10, 600, own);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain('"error":"request_timeout"');
    } finally {
      await capped.close();
    }
  }, 20_000);
});

describe('a request body that stops is given up on', () => {
  it('a stalled proxied upload gets 408, its connection closes and the upstream sees the request aborted', async () => {
    const before = { ...s.up.echo.counts };
    const raw = await openRaw(s.gw.url);
    raw.socket.write(
      `POST /echo/stalled HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${auth}\r\n` +
        'content-length: 100\r\n\r\n0123456789',
    );
    await raw.closed;
    expect(raw.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.text()).toMatch(/\r\nconnection: close\r\n/i);
    expect(raw.text()).toContain('"error":"request_timeout"');
    await waitFor(() => s.up.echo.counts.aborted > before.aborted, 5000);
    expect(s.up.echo.counts.finished).toBe(before.finished);
    const seen = s.up.echo.requests.at(-1);
    expect(seen?.url).toBe('/echo/stalled');
    expect(seen?.complete).toBe(false);
  }, 15_000);

  it('a stalled body to the gateway’s own endpoint (POST /1/users) gets 408', async () => {
    const raw = await openRaw(s.gw.url);
    raw.socket.write(
      'POST /1/users HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'content-length: 200\r\n\r\n{"email":"x',
    );
    await raw.closed;
    expect(raw.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(raw.text()).toContain('"error":"request_timeout"');
  }, 15_000);

  it('the stalled upload is counted once, as refused with reason request_timeout', async () => {
    const samples = await scrape(adminUrlOf(s.gw));
    expect(
      total(samples, 'tenant_gateway_requests_total', {
        route: '/echo',
        code: '408',
        outcome: 'refused',
        reason: 'request_timeout',
      }),
    ).toBe(1);
    expect(total(samples, 'tenant_gateway_requests_total', { route: '/echo', code: '200' })).toBe(
      1,
    );
  });
});

describe('an upstream response body', () => {
  it('that stops for longer than routes[].bodyIdleTimeoutMs is cut: the client sees an incomplete answer', async () => {
    const raw = await openRaw(s.gw.url);
    raw.socket.write(`GET /stall HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${auth}\r\n\r\n`);
    await raw.closed;
    expect(raw.text()).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw.text()).toContain('first chunk');
    // Chunked framing never reached its last chunk: the client knows it was cut.
    expect(raw.text()).not.toContain('\r\n0\r\n\r\n');
    await waitFor(() => s.up.stalling.counts.aborted === 1, 5000);
    const samples = await scrape(adminUrlOf(s.gw));
    expect(
      total(samples, 'tenant_gateway_requests_total', {
        route: '/stall',
        outcome: 'failed',
        reason: 'upstream_broke',
      }),
    ).toBe(1);
  }, 15_000);

  it('that trickles, never silent that long, completes however long it takes', async () => {
    const res = await fetch(`${s.gw.url}/trickle`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('chunk 9\n');
    expect(body.endsWith('last\n')).toBe(true);
  }, 15_000);
});

describe('server.keepAliveTimeoutMs', () => {
  it('closes an idle keep-alive connection after the setting, not before it and not after Node’s old 5 s', async () => {
    const raw = await openRaw(s.gw.url);
    raw.socket.write('GET /.well-known/jwks.json HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    await waitFor(() => raw.text().includes('\r\n\r\n'), 5000);
    const answeredAt = performance.now();
    let closedAt = 0;
    void raw.closed.then(() => (closedAt = performance.now()));
    await delay(KEEP_ALIVE_MS - 500);
    expect(closedAt).toBe(0);
    await raw.closed;
    const idle = closedAt - answeredAt;
    expect(idle).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 500);
    // Node's own default would hold it 5 s.
    expect(idle).toBeLessThan(4500);
  }, 15_000);
});
