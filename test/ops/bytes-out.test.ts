/**
 * An access line's `bytesOut` is what the client was sent for that request,
 * head and body, to the byte — counted from the socket's dispatched and
 * still-queued bytes (`request-recorder.ts`) — for each request of a
 * keep-alive connection: a small answer, a large one written in many pieces
 * to a client that has stopped reading, and the gateway's own error answer.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { lineSink, type Line } from '../support/log-sink.js';
import { startUpstream, waitFor, type CountingUpstream } from '../support/upstream.js';

const LARGE = 4 * 1024 * 1024;
let fx: IdentityFixture;
let gw: TestGateway;
let upstream: CountingUpstream;
let sink: ReturnType<typeof lineSink>;
let auth: string;

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    req.on('end', () => {
      const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size') ?? '0');
      res
        .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size })
        .end(Buffer.alloc(size, 120));
    });
  });
  fx = await startMemoryIdentityFixture({
    routes: [{ prefix: '/bytes', upstream: upstream.url, tenant: { header: 'X-Tenant-Id' } }],
  });
  sink = lineSink();
  gw = await startTestGateway(fx.config, { logTo: sink.stream });
  auth = bearer((await tokenFor(gw.url, ALICE, 'acme')).access_token);
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await fx?.close();
});

/** Each answer's exact bytes on the wire, framed by its Content-Length. */
function answersOn(socket: Socket): {
  sizes: number[];
  ids: string[];
  done(n: number): Promise<void>;
} {
  const sizes: number[] = [];
  const ids: string[] = [];
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 'NaN');
      if (!Number.isInteger(length)) throw new Error(`an answer without a length: ${head}`);
      const whole = end + 4 + length;
      if (buffered.length < whole) return;
      sizes.push(whole);
      ids.push(/\r\nx-request-id: ([^\r]+)/i.exec(head)?.[1] ?? '');
      buffered = buffered.subarray(whole);
    }
  });
  return { sizes, ids, done: (n) => waitFor(() => sizes.length >= n, 10_000) };
}

function lineOf(id: string): Line | undefined {
  return sink.lines.find((l) => l.msg === 'request' && l.requestId === id);
}

describe('bytesOut of the access line', () => {
  it('is each answer on a keep-alive connection to the byte, a large one to a paused client too', async () => {
    const port = new URL(gw.url).port;
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answers = answersOn(socket);
    const ask = (size: number, tenant = 'acme'): void => {
      socket.write(
        `GET /bytes/x?size=${size} HTTP/1.1\r\nHost: t\r\nAuthorization: ${auth}\r\nX-Tenant-Id: ${tenant}\r\n\r\n`,
      );
    };
    ask(10);
    await answers.done(1);
    // Not reading for a while: the 4 MiB go out in many writes, with back-pressure.
    socket.pause();
    ask(LARGE);
    await waitFor(() => sink.lines.filter((l) => l.msg === 'request').length >= 2, 10_000);
    socket.resume();
    await answers.done(2);
    ask(0, 'other-tenant'); // the gateway's own 403
    await answers.done(3);
    await waitFor(() => answers.ids.every((id) => lineOf(id) !== undefined), 5_000);
    const sent = answers.ids.map((id) => lineOf(id)?.bytesOut);
    expect(answers.sizes[1]).toBeGreaterThan(LARGE);
    expect(sent).toEqual(answers.sizes);
    expect(answers.ids.map((id) => lineOf(id)?.status)).toEqual([200, 200, 403]);
    socket.destroy();
    await delay(10);
  });
});
