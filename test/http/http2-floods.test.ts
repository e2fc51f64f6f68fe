/**
 * HTTP/2 floods from a raw client against the main listener: each is
 * bounded, ended with GOAWAY where RFC 9113 says so, counted in
 * `tenant_gateway_http2_refusals_total{reason}`, and the gateway keeps
 * serving other clients.
 */
import { describe, expect, it } from 'vitest';
import { useEchoFixture } from '../support/echo-fixture.js';
import { adminUrlOf } from '../support/gateway.js';
import { http2Get } from '../support/http2-client.js';
import {
  connectRawHttp2,
  ERROR,
  FLAG,
  FRAME,
  frame,
  headerBlock,
  requestFields,
  rstStream,
  type RawHttp2,
} from '../support/raw-http2.js';
const started = useEchoFixture((upstream) => ({
  listen: { http2: true },
  server: { keepAliveTimeoutMs: 1000, http2MaxConcurrentStreams: 20 },
  routes: [
    { prefix: '/open', upstream, auth: 'none' },
    // Nothing listens there: each request costs the gateway a connection attempt.
    { prefix: '/slow', upstream: 'http://127.0.0.1:1', auth: 'none' },
  ],
}));

async function refusals(reason: string): Promise<number> {
  const text = await (await fetch(`${adminUrlOf(started.fx.gw)}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`tenant_gateway_http2_refusals_total{reason="${reason}"}`));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

const port = () => Number(new URL(started.fx.gw.url).port);
const authority = () => new URL(started.fx.gw.url).host;

/** The connection got GOAWAY with `code` and was closed. */
async function endedWith(raw: RawHttp2, code: number): Promise<void> {
  await raw.waitFor((f) => f.type === FRAME.GOAWAY, 5000);
  expect(raw.goawayCode()).toBe(code);
  await raw.closed;
}

/** Another client is still served, over HTTP/2 and HTTP/1.1. */
async function othersServed(): Promise<void> {
  expect((await http2Get(started.fx.gw.url, '/open/after')).status).toBe(200);
  expect((await fetch(`${started.fx.gw.url}/open/after`)).status).toBe(200);
}

describe('HTTP/2 floods', () => {
  it('ends a rapid reset (streams opened and reset at once, CVE-2023-44487) with GOAWAY ENHANCE_YOUR_CALM', async () => {
    const before = await refusals('rapid_reset');
    const raw = await connectRawHttp2(port());
    const burst: Buffer[] = [];
    for (let i = 0; i < 400; i++) {
      const stream = 1 + 2 * i;
      const block = headerBlock(requestFields(authority(), `/slow/${i}`));
      burst.push(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream, block));
      burst.push(rstStream(stream, ERROR.CANCEL));
    }
    raw.write(...burst);
    await endedWith(raw, ERROR.ENHANCE_YOUR_CALM);
    expect(await refusals('rapid_reset')).toBe(before + 1);
    await othersServed();
  });

  for (const [what, flood] of [
    ['PING', () => frame(FRAME.PING, 0, 0, Buffer.alloc(8))],
    ['SETTINGS', () => frame(FRAME.SETTINGS, 0, 0)],
  ] as const) {
    it(`ends a ${what} flood with GOAWAY ENHANCE_YOUR_CALM`, async () => {
      const before = await refusals('flood');
      const raw = await connectRawHttp2(port());
      raw.write(...Array.from({ length: 1000 }, flood));
      await endedWith(raw, ERROR.ENHANCE_YOUR_CALM);
      expect(await refusals('flood')).toBe(before + 1);
      await othersServed();
    });
  }

  it('ends a header block that never ends (CONTINUATION flood) and keeps serving', async () => {
    const raw = await connectRawHttp2(port());
    const frames = [frame(FRAME.HEADERS, 0, 1, headerBlock(requestFields(authority(), '/open/x')))];
    for (let i = 0; i < 5000; i++)
      frames.push(frame(FRAME.CONTINUATION, 0, 1, headerBlock([[`x-h${i}`, 'v'.repeat(100)]])));
    raw.write(...frames);
    await raw.closed;
    expect(raw.frames.some((f) => f.type === FRAME.HEADERS && f.stream === 1)).toBe(false);
    await othersServed();
  });

  it('refuses streams past server.http2MaxConcurrentStreams with REFUSED_STREAM', async () => {
    const raw = await connectRawHttp2(port());
    try {
      for (let i = 0; i < 30; i++) raw.headers(1 + 2 * i, requestFields(authority(), `/slow/${i}`));
      const refused = await raw.waitFor((f) => f.type === FRAME.RST_STREAM);
      expect(refused.payload.readUInt32BE(0)).toBe(7); // REFUSED_STREAM
      expect(refused.stream).toBeGreaterThan(2 * 20 - 1);
      await othersServed();
    } finally {
      raw.close();
    }
  });

  it('closes an idle connection after server.keepAliveTimeoutMs with GOAWAY NO_ERROR', async () => {
    const raw = await connectRawHttp2(port());
    await endedWith(raw, ERROR.NO_ERROR);
  });
});
