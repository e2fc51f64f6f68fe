/**
 * DESIGN §1 502/504 rows and §2 step 4: what a client sees when the upstream
 * refuses, resets, stalls or breaks mid-answer, and the failure modes
 * http-proxy is known for (a `Trailer` request header, clients that hang up
 * mid-request). The upstreams are real loopback servers that count how each
 * request ended; the gateway runs in this process, so an exception escaping
 * it would reach this process too — counted, and required to stay at 0.
 */
import { createHash } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../support/raw-exchange.js';
import { expectError } from '../support/expect-error.js';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import {
  refusedUpstream,
  startBreakingUpstream,
  startEchoUpstream,
  startSlowUpstream,
  startUpstream,
  waitFor,
  type CountingUpstream,
  type Upstream,
} from '../support/upstream.js';

const escaped: unknown[] = [];
const onUncaught = (err: unknown): void => void escaped.push(err);
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUncaught);

let fx: IdentityFixture;
let url: string;
let auth: string;
let echo: CountingUpstream;
let stalled: CountingUpstream;
let hanging: CountingUpstream;
let resetting: CountingUpstream;
let breaking: CountingUpstream;
let refused: Upstream;
let trailing: CountingUpstream;

beforeAll(async () => {
  [echo, stalled, hanging, resetting, breaking, refused, trailing] = await Promise.all([
    startEchoUpstream(),
    startSlowUpstream(),
    startSlowUpstream(),
    startBreakingUpstream('on-request'),
    startBreakingUpstream('mid-response'),
    refusedUpstream(),
    // Answers chunked with a trailer, as gRPC-web and checksumming servers do.
    startUpstream((req, res) => {
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain', trailer: 'X-Checksum' });
        res.write('trailed body');
        res.addTrailers({ 'X-Checksum': 'abc123' });
        res.end();
      });
    }),
  ]);
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/echo', upstream: echo.url },
      { prefix: '/refused', upstream: refused.url },
      { prefix: '/reset', upstream: resetting.url },
      { prefix: '/broken', upstream: breaking.url },
      { prefix: '/slow', upstream: stalled.url, timeoutMs: 300 },
      { prefix: '/hang', upstream: hanging.url, timeoutMs: 30_000 },
      { prefix: '/trailing', upstream: trailing.url },
    ],
  });
  url = fx.gw.url;
  auth = bearer((await tokenFor(url, ALICE, 'acme')).access_token);
});

afterAll(async () => {
  await fx?.close();
  await Promise.all(
    [echo, stalled, hanging, resetting, breaking, refused, trailing].map((u) => u?.close()),
  );
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

const get = (path: string): Promise<Response> =>
  fetch(`${url}${path}`, { headers: { authorization: auth } });

/** The gateway still proxies: a plain request through it is answered by the upstream. */
async function expectStillServing(): Promise<void> {
  const res = await get('/echo/after');
  expect(res.status).toBe(200);
  expect(((await res.json()) as { url: string }).url).toBe('/echo/after');
}

describe('upstream errors become 502 and 504 JSON', () => {
  it('a refused connection is a 502 bad_gateway with a request id', async () => {
    const res = await fetch(`${url}/refused/things`, {
      headers: { authorization: auth, 'x-request-id': 'refused-1' },
    });
    await expectError(res, 502, 'bad_gateway');
    expect(res.headers.get('x-request-id')).toBe('refused-1');
  });

  it('an upstream that resets the connection on the request is a 502 bad_gateway', async () => {
    const before = resetting.counts.received;
    await expectError(await get('/reset/things'), 502, 'bad_gateway');
    expect(resetting.counts.received).toBeGreaterThan(before);
  });

  it('no answer within timeoutMs is a 504 gateway_timeout, and the upstream request is aborted', async () => {
    const started = Date.now();
    const res = await get('/slow/report');
    await expectError(res, 504, 'gateway_timeout');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(10_000);
    expect(stalled.counts.received).toBe(1);
    await waitFor(() => stalled.counts.aborted === 1 && stalled.counts.open === 0, 1000);
    expect(stalled.counts.finished).toBe(0);
  });

  it('a response that breaks after it began reaches the client broken, and the gateway serves on', async () => {
    const res = await get('/broken/stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000000');
    // A body that never ends would be a hang, not a broken response: race it.
    const outcome = await Promise.race([
      res.arrayBuffer().then(
        () => 'complete',
        (err: unknown) => err,
      ),
      delay(5000).then(() => 'still open after 5 s'),
    ]);
    expect(outcome).toBeInstanceOf(Error);
    await expectStillServing();
  });
});

describe('http-proxy failure modes', () => {
  it('a request announcing and sending trailers is answered by the upstream, and the gateway lives', async () => {
    const chunks = [
      Buffer.from('first chunk,'),
      Buffer.from('second chunk,'),
      Buffer.from('last chunk'),
    ];
    const whole = Buffer.concat(chunks);
    const checksum = createHash('sha256').update(whole).digest('hex');
    const before = echo.requests.length;
    const { res, body } = await rawRequest('/echo/trailers', 'POST', (req) => {
      req.setHeader('trailer', 'X-Checksum');
      req.setHeader('transfer-encoding', 'chunked');
      for (const chunk of chunks) req.write(chunk);
      req.addTrailers({ 'X-Checksum': checksum });
      req.end();
    });
    expect(res.statusCode).toBe(200);
    const seen = JSON.parse(body.toString()) as {
      url: string;
      bodyLength: number;
      bodySha256: string;
    };
    expect(seen).toMatchObject({
      url: '/echo/trailers',
      bodyLength: whole.length,
      bodySha256: checksum,
    });
    expect(echo.requests.length).toBe(before + 1);
    await expectStillServing();
  });

  it('an upstream response with a Trailer header reaches an HTTP/1.1 client', async () => {
    const res = await get('/trailing/x');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('trailed body');
    await expectStillServing();
  });

  it('an upstream response with a Trailer header reaches an HTTP/1.0 client (no chunking there)', async () => {
    const { port } = new URL(url);
    const raw = await rawExchange(
      Number(port),
      `GET /trailing/old HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe('trailed body');
    await expectStillServing();
  });

  it('a request with Expect: 100-continue still times out as a 504', async () => {
    const received = stalled.counts.received;
    const answer = new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${url}/slow/expecting`, {
        method: 'POST',
        headers: { authorization: auth, expect: '100-continue', 'content-length': '5' },
        agent: false,
      });
      req.on('continue', () => req.end('hello'));
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      void delay(5000).then(() => {
        resolve(undefined);
        req.destroy();
      });
    });
    expect(await answer).toBe(504);
    expect(stalled.counts.received).toBe(received + 1);
    await waitFor(() => stalled.counts.open === 0, 1000);
  });

  it('100 clients hanging up mid-request leave no upstream request open', async () => {
    const clients = Array.from({ length: 100 }, (_, i) => {
      const req = request(`${url}/hang/${i}`, { headers: { authorization: auth }, agent: false });
      req.on('error', () => {});
      req.end();
      return req;
    });
    await waitFor(() => hanging.counts.received === 100, 10_000);
    expect(hanging.counts.open).toBe(100);
    for (const req of clients) req.destroy();
    await waitFor(() => hanging.counts.open === 0, 3000);
    expect(hanging.counts).toMatchObject({ received: 100, aborted: 100, finished: 0 });
    await expectStillServing();
  });
});

describe('the process', () => {
  it('saw no uncaught exception nor unhandled rejection across this file', () => {
    expect(escaped).toEqual([]);
  });
});

/** A node:http request to the gateway with the bearer set; `send` writes and ends the body. */
function rawRequest(
  path: string,
  method: string,
  send: (req: ReturnType<typeof request>) => void,
): Promise<{ res: IncomingMessage; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, headers: { authorization: auth }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    send(req);
  });
}
