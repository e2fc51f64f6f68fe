/**
 * Issue 47: gRPC routes. Real @grpc/grpc-js clients call a real grpc-js
 * upstream through the gateway: every call shape, metadata both ways,
 * deadlines, messages of several MB, cancellation both ways, identity
 * metadata injected and spoofed metadata stripped, scopes per gRPC method,
 * and each refusal as the gRPC status DESIGN maps it to.
 */
import { request as httpRequest } from 'node:http';
import { createServer as createHttp2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import {
  echoClient,
  startEchoUpstream,
  startResettingUpstream,
  unary,
  withToken,
  type EchoMsg,
  type EchoUpstream,
} from '../support/grpc-echo.js';
import { http2Session, sendSpoofedTrailers } from '../support/http2-client.js';

/** What a raw h2c upstream saw of one call: its header block, its request trailers if any, its body's length. */
interface RawCall {
  headers: IncomingHttpHeaders;
  trailers?: IncomingHttpHeaders;
  bodyBytes: number;
}

/** An h2c upstream that records each call's header block and request trailers (grpc-js shows neither), answering OK. */
async function startRecordingUpstream() {
  const calls: RawCall[] = [];
  const server = createHttp2Server();
  server.on('stream', (stream, headers) => {
    const call: RawCall = { headers, bodyBytes: 0 };
    calls.push(call);
    stream.on('trailers', (trailers: IncomingHttpHeaders) => (call.trailers = trailers));
    stream.on('data', (chunk: Buffer) => (call.bodyBytes += chunk.length));
    stream.on('end', () => {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' },
        {
          endStream: true,
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const s = fixtureSuite(
  {
    echo: startEchoUpstream,
    down: startEchoUpstream,
    resetting: startResettingUpstream,
    recording: startRecordingUpstream,
  },
  ({ echo, down, resetting, recording }) => ({
    // The main listener speaks HTTP/2 (h2c by prior knowledge) beside HTTP/1.1.
    listen: { http2: true },
    routes: [
      {
        prefix: '/test.echo.Echo',
        upstream: echo.url,
        protocol: 'grpc',
        tenant: { header: 'x-tenant-id' },
        scopes: { '/test.echo.Echo/Bidi': ['orders:write'], '*': ['orders:read'] },
      },
      {
        prefix: '/limited.Echo',
        upstream: echo.url,
        protocol: 'grpc',
        rewrite: { prefix: '/test.echo.Echo' },
        rateLimit: { perUser: { requestsPerSecond: 1, burst: 1 } },
      },
      {
        prefix: '/slow.Echo',
        upstream: echo.url,
        protocol: 'grpc',
        timeoutMs: 300,
        rewrite: { prefix: '/test.echo.Echo' },
      },
      {
        prefix: '/reset.Echo',
        upstream: resetting.url,
        protocol: 'grpc',
      },
      {
        prefix: '/raw.Svc',
        upstream: recording.url,
        protocol: 'grpc',
        tenant: { header: 'x-tenant-id' },
      },
      {
        prefix: '/down.Echo',
        upstream: down.url,
        protocol: 'grpc',
        rewrite: { prefix: '/test.echo.Echo' },
      },
    ],
    authorization: { roles: { admin: ['orders:read'], member: ['orders:read'] } },
  }),
  { token: true },
);

let client: ReturnType<typeof echoClient>;
let echo: EchoUpstream;

beforeAll(async () => {
  echo = s.up.echo;
  await s.up.down.close();
  client = echoClient(new URL(s.gw.url).host);
});
afterAll(async () => {
  client?.close();
});

const lastCall = () => echo.calls[echo.calls.length - 1];

describe('calls of every shape pass, metadata both ways', () => {
  it("unary: the answer, the upstream's initial metadata and trailers, identity injected", async () => {
    const { answer, head, trailers, error } = await unary(
      client,
      { text: 'hello' },
      withToken(s.token, { 'x-echo': 'ping' }),
    );
    expect(error).toBeUndefined();
    expect(answer?.text).toBe('hello');
    expect(head?.get('x-echo')).toEqual(['ping']);
    expect(trailers?.get('x-trailer')).toEqual(['from-upstream']);
    const md = lastCall()?.metadata ?? {};
    expect(md['x-tenant-id']).toBe('acme');
    expect(md['x-user-email']).toBe('alice@example.com');
    expect(md.authorization).toBeUndefined();
  });

  it('spoofed identity metadata is stripped, -bin variants too', async () => {
    const md = withToken(s.token, { 'x-user-id': 'mallory', 'x-user-email': 'm@evil' });
    md.set('x-user-id-bin', Buffer.from('mallory'));
    md.set('x-forwarded-user-bin', Buffer.from('mallory'));
    const { error } = await unary(client, { text: 'x' }, md);
    expect(error).toBeUndefined();
    const seen = lastCall()?.metadata ?? {};
    expect(seen['x-user-email']).toBe('alice@example.com');
    expect(seen['x-user-id']).not.toBe('mallory');
    expect(seen['x-user-id-bin']).toBeUndefined();
    expect(seen['x-forwarded-user-bin']).toBeUndefined();
  });

  it('request trailers never reach the upstream: identity, a credential or a tenant sent after the messages stays at the gateway', async () => {
    const session = await http2Session(s.gw.url);
    try {
      const status = await new Promise<string | undefined>((resolve, reject) => {
        const stream = session.request(
          {
            ':method': 'POST',
            ':path': '/raw.Svc/Do',
            'content-type': 'application/grpc',
            te: 'trailers',
            authorization: `Bearer ${s.token}`,
          },
          { waitForTrailers: true },
        );
        sendSpoofedTrailers(stream);
        let grpcStatus: string | undefined;
        stream.on('response', (headers) => (grpcStatus = headers['grpc-status'] as string));
        stream.on('data', () => {});
        stream.on('end', () => resolve(grpcStatus));
        stream.on('error', reject);
        // One empty message: no compression flag, length 0.
        stream.end(Buffer.alloc(5));
      });
      expect(status).toBe('0');
      const seen = s.up.recording.calls.at(-1);
      expect(seen?.bodyBytes).toBe(5);
      expect(seen?.trailers).toBeUndefined();
      expect(seen?.headers['x-tenant-id']).toBe('acme');
      expect(seen?.headers['x-user-email']).toBe('alice@example.com');
      expect(seen?.headers.authorization).toBeUndefined();
    } finally {
      session.close();
    }
  });

  it('server streaming: every message, in order', async () => {
    const call = client.ServerStream({ text: 'm', count: 50 }, withToken(s.token));
    const got: string[] = [];
    for await (const m of call as AsyncIterable<EchoMsg>) got.push(m.text ?? '');
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => `m-${i}`));
  });

  it('client streaming with messages of several MB: all of them arrive', async () => {
    const blob = Buffer.alloc(3 << 20, 7);
    const answer = await new Promise<EchoMsg>((resolve, reject) => {
      const call = client.ClientStream(withToken(s.token), (err: Error | null, m: EchoMsg) =>
        err ? reject(err) : resolve(m),
      ) as grpc.ClientWritableStream<EchoMsg>;
      for (let i = 0; i < 4; i++) call.write({ text: String(i), blob });
      call.end();
    });
    expect(answer.text).toBe('0,1,2,3');
    expect(answer.count).toBe(4 * blob.length);
  });

  it('a large unary answer streams back whole', async () => {
    const blob = Buffer.alloc(8 << 20, 3);
    const { answer, error } = await unary(client, { text: 'big', blob }, withToken(s.token));
    expect(error).toBeUndefined();
    expect(answer?.blob?.length).toBe(blob.length);
  });
});

describe('deadlines and cancellation', () => {
  it('grpc-timeout reaches the upstream', async () => {
    const before = Date.now();
    await unary(client, { text: 'd' }, withToken(s.token), { deadline: Date.now() + 5000 });
    const deadline = lastCall()?.deadline ?? Infinity;
    expect(deadline).toBeGreaterThan(before);
    expect(deadline).toBeLessThan(before + 6000);
  });

  it("the route's timeout: an upstream that does not answer in time is DEADLINE_EXCEEDED from the gateway", async () => {
    const { error } = await unary(
      client,
      { text: 's', delay_ms: 2000 },
      withToken(s.token),
      {},
      '/slow.Echo',
    );
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(error?.details).toBe('gateway_timeout');
  });

  it('a client cancel cancels the upstream call', async () => {
    const cs = client.ServerStream({ text: 'c', count: 0 }, withToken(s.token));
    cs.on('error', () => {});
    await waitFor(() => echo.live.size > 0);
    const seen = echo.calls.filter((c) => c.method === 'ServerStream').pop();
    (cs as grpc.ClientReadableStream<EchoMsg>).cancel();
    expect(await seen?.ended).toBe('cancelled');
  });

  it("an upstream that resets its stream cancels the client's call", async () => {
    const { error } = await unary(client, { text: 'u' }, withToken(s.token), {}, '/reset.Echo');
    expect(error?.code).toBe(grpc.status.CANCELLED);
  });
});

describe("refusals in gRPC's shape", () => {
  it('no token: UNAUTHENTICATED, grpc-message invalid_token', async () => {
    const { error } = await unary(client, { text: 'x' }, withToken(undefined));
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(error?.details).toBe('invalid_token');
  });

  it('an invalid token: UNAUTHENTICATED', async () => {
    const { error } = await unary(client, { text: 'x' }, withToken(`${s.token}x`));
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('another tenant in the metadata: PERMISSION_DENIED tenant_mismatch', async () => {
    const { error } = await unary(
      client,
      { text: 'x' },
      withToken(s.token, { 'x-tenant-id': 'globex' }),
    );
    expect(error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(error?.details).toBe('tenant_mismatch');
  });

  it('a gRPC method whose scope the token lacks: PERMISSION_DENIED insufficient_scope, the upstream never called', async () => {
    const before = echo.calls.length;
    const call = client.Bidi(withToken(s.token)) as grpc.ClientDuplexStream<EchoMsg, EchoMsg>;
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {});
    call.end();
    const { code, details } = await status;
    expect(code).toBe(grpc.status.PERMISSION_DENIED);
    expect(details).toBe('insufficient_scope');
    expect(echo.calls.length).toBe(before);
  });

  it('metadata past the 16 KiB header list: RESOURCE_EXHAUSTED headers_too_large, the upstream never called', async () => {
    const before = echo.calls.length;
    const big = withToken(s.token, { 'x-big': 'x'.repeat(17 * 1024) });
    const { error } = await unary(client, { text: 'x' }, big);
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toBe('headers_too_large');
    expect(echo.calls.length).toBe(before);
  });

  it('past the rate limit: RESOURCE_EXHAUSTED', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { error } = await unary(client, { text: 'r' }, withToken(s.token), {}, '/limited.Echo');
      codes.push(error?.code ?? grpc.status.OK);
    }
    expect(codes).toContain(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('an upstream that is down: UNAVAILABLE bad_gateway', async () => {
    const { error } = await unary(client, { text: 'x' }, withToken(s.token), {}, '/down.Echo');
    expect(error?.code).toBe(grpc.status.UNAVAILABLE);
    expect(error?.details).toBe('bad_gateway');
  });

  it("a gRPC route over HTTP/1.1: refused in gRPC's shape (200, grpc-status, no body)", async () => {
    const answer = await new Promise<{
      status: number;
      headers: Record<string, unknown>;
      body: string;
    }>((resolve, reject) => {
      const req = httpRequest(
        `${s.gw.url}/test.echo.Echo/Unary`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/grpc', authorization: `Bearer ${s.token}` },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/grpc');
    expect(answer.headers['grpc-status']).toBe(String(grpc.status.INVALID_ARGUMENT));
    expect(answer.headers['grpc-message']).toBe('invalid_request');
    expect(answer.body).toBe('');
  });
});

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
