/**
 * Issue 47: the gateway's HTTP/2 sessions to gRPC upstreams, against real
 * grpc-js servers whose TCP connections are counted where they arrive:
 * h2 over TLS to an `https://` upstream (the route's `tls.ca` trusted, any
 * other certificate refused with UNAVAILABLE, never a hang); GOAWAY — the
 * graceful one of grpc-js's `max_connection_age`, and a server shut down
 * and started again on its port — after which calls go on a new session;
 * and the bound on sessions per upstream when each allows few streams.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import {
  EchoClient,
  echoClient,
  startEchoUpstream,
  unary,
  withToken,
  type EchoMsg,
  type EchoUpstream,
} from '../support/grpc-echo.js';
import { makeCa, makeSignedCertificate } from '../support/test-certificates.js';

/** A CA, another CA, and a certificate for `upstream.test` signed by the first. */
const dir = mkdtempSync(join(tmpdir(), 'tg-grpc-tls-'));
for (const ca of ['ca', 'other-ca']) makeCa(dir, ca);
makeSignedCertificate(dir, 'server', '/CN=upstream.test', 'subjectAltName=DNS:upstream.test');
const at = (name: string) => join(dir, name);

/** The gateway's bound on sessions per upstream origin (`grpc-sessions.ts`, docs/grpc.md). */
const MAX_SESSIONS = 4;

const s = fixtureSuite(
  {
    secure: () =>
      startEchoUpstream({
        tls: { key: readFileSync(at('server.key')), cert: readFileSync(at('server.pem')) },
      }),
    // grpc-js sends GOAWAY to a connection 300 ms old (±10%), and lets its streams finish.
    aging: () =>
      startEchoUpstream({
        server: { 'grpc.max_connection_age_ms': 300, 'grpc.max_connection_age_grace_ms': 10_000 },
      }),
    restarted: () => startEchoUpstream(),
    narrow: () => startEchoUpstream({ server: { 'grpc.max_concurrent_streams': 2 } }),
  },
  ({ secure, aging, restarted, narrow }) => {
    const echo = (prefix: string, upstream: string, more: Record<string, unknown> = {}) => ({
      prefix,
      upstream,
      protocol: 'grpc',
      rewrite: { prefix: '/test.echo.Echo' },
      ...more,
    });
    return {
      listen: { http2: true },
      routes: [
        echo('/tls.Echo', secure.url, { tls: { ca: at('ca.pem'), serverName: 'upstream.test' } }),
        echo('/untrusted.Echo', secure.url, {
          tls: { ca: at('other-ca.pem'), serverName: 'upstream.test' },
        }),
        echo('/system-cas.Echo', secure.url),
        echo('/aging.Echo', aging.url),
        echo('/restarted.Echo', restarted.url),
        echo('/narrow.Echo', narrow.url),
      ],
    };
  },
  { token: true },
);

let client: ReturnType<typeof echoClient>;
beforeAll(() => {
  client = echoClient(new URL(s.gw.url).host);
});
afterAll(() => {
  client?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A unary call on `service`, failing after 10 s rather than hanging. */
const call = (service: string, request: EchoMsg = { text: 'hi' }) =>
  unary(client, request, withToken(s.token), { deadline: Date.now() + 10_000 }, service);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A bidi stream of `service` through the gateway (a route that rewrites it to test.echo.Echo). */
function bidi(service: string): grpc.ClientDuplexStream<EchoMsg, EchoMsg> {
  const method = EchoClient.service.Bidi as grpc.MethodDefinition<EchoMsg, EchoMsg>;
  return client.makeBidiStreamRequest(
    `${service}/Bidi`,
    method.requestSerialize,
    method.responseDeserialize,
    withToken(s.token),
  );
}

describe('h2 over TLS to an https:// upstream', () => {
  it("a call passes, the upstream's certificate checked against the route's tls.ca and serverName", async () => {
    const before = s.up.secure.calls.length;
    const { answer, error, trailers } = await call('/tls.Echo', { text: 'over tls' });
    expect(error).toBeUndefined();
    expect(answer?.text).toBe('over tls');
    expect(trailers?.get('x-trailer')).toEqual(['from-upstream']);
    expect(s.up.secure.calls.length).toBe(before + 1);
    expect(s.up.secure.connections.opened).toBeGreaterThan(0);
  });

  it('a certificate of another CA: UNAVAILABLE bad_gateway, at once, and the upstream never called', async () => {
    const before = s.up.secure.calls.length;
    for (const service of ['/untrusted.Echo', '/system-cas.Echo']) {
      const { error } = await call(service);
      expect(error?.code, service).toBe(grpc.status.UNAVAILABLE);
      expect(error?.details, service).toBe('bad_gateway');
    }
    expect(s.up.secure.calls.length).toBe(before);
  });
});

describe('GOAWAY: later calls on a new session, in-flight streams finish or fail UNAVAILABLE', () => {
  it("grpc-js's max_connection_age: every call of 1.5 s of traffic passes over several sessions, two at most at once", async () => {
    const aging = s.up.aging;
    const failures: string[] = [];
    const until = Date.now() + 1500;
    let calls = 0;
    while (Date.now() < until) {
      const round = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call('/aging.Echo', { text: `r${i}` })),
      );
      calls += round.length;
      for (const { error } of round) if (error !== undefined) failures.push(error.message);
      await sleep(10);
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(20);
    // A GOAWAY every ~300 ms: new sessions were opened…
    expect(aging.connections.opened).toBeGreaterThanOrEqual(3);
    // …each after the last one left the pool: the old one only drains.
    expect(aging.connections.peak).toBeLessThanOrEqual(2);
  });

  it('a bidi stream open across a graceful GOAWAY finishes on its session', async () => {
    const stream = bidi('/aging.Echo');
    const got: string[] = [];
    stream.on('data', (m: EchoMsg) => got.push(m.text ?? ''));
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => {});
    stream.write({ text: 'before' });
    const opened = s.up.aging.connections.opened;
    // Past the connection's age: the upstream has sent its GOAWAY.
    await sleep(700);
    const { error } = await call('/aging.Echo');
    expect(error).toBeUndefined();
    expect(s.up.aging.connections.opened).toBeGreaterThan(opened);
    stream.write({ text: 'after' });
    stream.end();
    expect((await status).code).toBe(grpc.status.OK);
    expect(got.join('|')).toContain('before');
    expect(got.join('|')).toContain('after');
  });

  it('an upstream shut down under a live stream: the stream fails UNAVAILABLE; restarted on its port, calls pass on one new session', async () => {
    const first = s.up.restarted;
    expect((await call('/restarted.Echo')).error).toBeUndefined();
    const stream = bidi('/restarted.Echo');
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    stream.on('error', () => {});
    stream.on('data', () => {});
    stream.write({ text: 'live' });
    await waitFor(() => first.live.size > 0);
    await first.close();
    const ended = await status;
    expect(ended.code).toBe(grpc.status.UNAVAILABLE);
    expect(ended.details).toBe('bad_gateway');
    // Nothing listens: refused, as any upstream that is down.
    expect((await call('/restarted.Echo')).error?.code).toBe(grpc.status.UNAVAILABLE);
    const second: EchoUpstream = await startEchoUpstream({ port: first.port });
    try {
      for (let i = 0; i < 5; i++) expect((await call('/restarted.Echo')).error).toBeUndefined();
      expect(second.calls.length).toBe(5);
      expect(second.connections.opened).toBe(1);
    } finally {
      await second.close();
    }
  });
});

describe('the bound on sessions per upstream', () => {
  it(`an upstream allowing 2 streams a session: 24 concurrent calls pass on ${MAX_SESSIONS} sessions at most`, async () => {
    const narrow = s.up.narrow;
    const round = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call('/narrow.Echo', { text: `n${i}`, delay_ms: 150 })),
    );
    expect(round.map((r) => r.error?.message)).toEqual(round.map(() => undefined));
    expect(narrow.calls.length).toBe(24);
    expect(narrow.connections.opened).toBeGreaterThan(1);
    expect(narrow.connections.peak).toBeLessThanOrEqual(MAX_SESSIONS);
  });
});

async function waitFor(ok: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(20);
  }
}
