/**
 * Issue 47: the gateway's own cut of a gRPC call. Against an upstream that
 * never answers (and ignores `grpc-timeout`, as a server without deadline
 * support does), the gateway ends the call with DEADLINE_EXCEEDED at its
 * `grpc-timeout`, or at the route's `timeoutMs` when that is shorter and no
 * response head came, and resets the upstream stream (the upstream sees
 * RST_STREAM CANCEL). A grpc-js client cuts at its own deadline too, so the
 * gateway's answer is read with a node:http2 client that sends
 * `grpc-timeout` and keeps no timer of its own.
 */
import {
  connect,
  constants,
  createServer,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { echoClient, unary, withToken } from '../support/grpc-echo.js';

/** One call as the silent upstream saw it: its headers, and how its stream closed. */
interface Held {
  headers: IncomingHttpHeaders;
  /** The RST_STREAM code the gateway closed it with (0: closed cleanly). */
  closed: Promise<number>;
}

/** An h2c upstream that never ends a call: with `head`, it answers the head and nothing more. */
async function startSilentUpstream(head: boolean) {
  const held: Held[] = [];
  const server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    stream.on('error', () => {});
    const closed = new Promise<number>((resolve) =>
      stream.on('close', () => resolve(stream.rstCode)),
    );
    held.push({ headers, closed });
    stream.resume();
    if (head) stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const s = fixtureSuite(
  { silent: () => startSilentUpstream(false), headOnly: () => startSilentUpstream(true) },
  ({ silent, headOnly }) => ({
    listen: { http2: true },
    routes: [
      { prefix: '/silent.Echo', upstream: silent.url, protocol: 'grpc', timeoutMs: 10_000 },
      { prefix: '/quick.Echo', upstream: silent.url, protocol: 'grpc', timeoutMs: 300 },
      { prefix: '/head.Echo', upstream: headOnly.url, protocol: 'grpc', timeoutMs: 300 },
    ],
  }),
  { token: true },
);

let session: ClientHttp2Session;
beforeAll(() => {
  session = connect(s.gw.url);
  session.on('error', () => {});
});
afterAll(() => session?.close());

interface Ended {
  status: string | undefined;
  message: string | undefined;
  /** Whether a response head came before the trailers (else trailers-only). */
  headFirst: boolean;
  ms: number;
}

/** A unary call of `path` with `grpc-timeout` (when given), one empty message; its status as the client reads it. */
function rawCall(path: string, timeout?: string): Promise<Ended> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: `Bearer ${s.token}`,
      ...(timeout === undefined ? {} : { 'grpc-timeout': timeout }),
    });
    let head: IncomingHttpHeaders | undefined;
    const end = (fields: IncomingHttpHeaders, headFirst: boolean) =>
      resolve({
        status: fields['grpc-status'] as string | undefined,
        message: fields['grpc-message'] as string | undefined,
        headFirst,
        ms: performance.now() - started,
      });
    stream.on('response', (headers) => {
      if (headers['grpc-status'] !== undefined) end(headers, false);
      else head = headers;
    });
    stream.on('trailers', (trailers) => end(trailers, head !== undefined));
    stream.on('error', reject);
    stream.on('close', () => reject(new Error(`closed without a status (${stream.rstCode})`)));
    stream.resume();
    stream.end(Buffer.alloc(5));
  });
}

const lastHeld = (held: Held[]) => held[held.length - 1] as Held;

describe("the gateway's grpc-timeout cut", () => {
  it('an upstream that never answers: DEADLINE_EXCEEDED at the grpc-timeout, the upstream stream reset', async () => {
    const ended = await rawCall('/silent.Echo/Unary', '400m');
    expect(ended).toMatchObject({ status: '4', message: 'gateway_timeout', headFirst: false });
    expect(ended.ms).toBeGreaterThanOrEqual(390);
    // Well before the route's 10 s: the deadline cut it.
    expect(ended.ms).toBeLessThan(5000);
    const held = lastHeld(s.up.silent.held);
    expect(held.headers['grpc-timeout']).toBe('400m');
    expect(await held.closed).toBe(constants.NGHTTP2_CANCEL);
  });

  it('after the response head too: the call ends with trailers grpc-status 4, the upstream stream reset', async () => {
    const ended = await rawCall('/head.Echo/Unary', '600m');
    expect(ended).toMatchObject({ status: '4', message: 'gateway_timeout', headFirst: true });
    // The route's 300 ms bounds only the wait for the head, which came at once.
    expect(ended.ms).toBeGreaterThanOrEqual(590);
    expect(await lastHeld(s.up.headOnly.held).closed).toBe(constants.NGHTTP2_CANCEL);
  });

  it("the route's timeoutMs, shorter than grpc-timeout, cuts the wait for the head", async () => {
    const ended = await rawCall('/quick.Echo/Unary', '10S');
    expect(ended).toMatchObject({ status: '4', message: 'gateway_timeout', headFirst: false });
    expect(ended.ms).toBeGreaterThanOrEqual(290);
    expect(ended.ms).toBeLessThan(5000);
    expect(await lastHeld(s.up.silent.held).closed).toBe(constants.NGHTTP2_CANCEL);
  });

  it('a grpc-js client with a deadline: DEADLINE_EXCEEDED, and the upstream sees the cancellation', async () => {
    const client = echoClient(new URL(s.gw.url).host);
    try {
      const before = s.up.silent.held.length;
      const started = performance.now();
      const { error } = await unary(
        client,
        { text: 'x' },
        withToken(s.token),
        { deadline: Date.now() + 400 },
        '/silent.Echo',
      );
      expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(performance.now() - started).toBeLessThan(5000);
      expect(s.up.silent.held.length).toBe(before + 1);
      expect(await lastHeld(s.up.silent.held).closed).toBe(constants.NGHTTP2_CANCEL);
    } finally {
      client.close();
    }
  });
});
