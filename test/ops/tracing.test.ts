/**
 * Issue 20: OpenTelemetry traces, checked by a real OTLP/HTTP receiver that
 * decodes what the gateway's exporter sends. A server span per request, a
 * client span per upstream call whose context is the `traceparent` the
 * upstream received, child spans for store calls and password checks, the
 * trace id in the access log, a client's trace continued only from a
 * trusted proxy, and off: nothing added, `traceparent` passed through.
 *
 * Spans are exported in batches; each gateway is closed (which flushes them)
 * before its spans are read. On the memory store (the store is not the
 * subject), so each traced gateway has a store of its own: a token is taken
 * from the gateway it is used on, or the request goes to a public route.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE } from '../support/identity-fixture.js';
import { lineSink, type Line } from '../support/log-sink.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { refusedUpstream, startEchoUpstream } from '../support/upstream.js';
import { FINAL_EXPORT_MS } from '../../src/ops/tracing.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const clientTraceparent = (flags: string) => `00-${CLIENT_TRACE}-${CLIENT_SPAN}-${flags}`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

const s = fixtureSuite(
  { receiver: startOtlpReceiver, echo: startEchoUpstream, refused: refusedUpstream },
  ({ echo, refused }) => ({
    routes: [
      { prefix: '/echo', upstream: echo.url },
      { prefix: '/open', upstream: echo.url, auth: 'none' },
      { prefix: '/refused', upstream: refused.url },
    ],
  }),
  { token: true },
);
let receiver: OtlpReceiver;
beforeAll(() => {
  ({ receiver } = s.up);
});

/** A gateway exporting to the receiver as `service`; closed (flushed) by the caller. */
async function tracedGateway(
  service: string,
  options: {
    trustedProxies?: string[];
    sampleRatio?: number;
    logTo?: NodeJS.WritableStream;
    otlpEndpoint?: string;
  } = {},
): Promise<TestGateway> {
  return startTestGateway(
    {
      ...s.fx.config,
      trustedProxies: options.trustedProxies ?? [],
      forwardAuth: { host: '127.0.0.1', port: 0 },
      tracing: {
        enabled: true,
        otlpEndpoint: options.otlpEndpoint ?? receiver.url,
        serviceName: service,
        sampleRatio: options.sampleRatio ?? 1,
      },
    },
    options.logTo === undefined ? {} : { logTo: options.logTo },
  );
}

const spansOf = (service: string): ReceivedSpan[] =>
  receiver.spans.filter((s) => s.service === service);

describe('with a trusted client (trustedProxies: 127.0.0.1)', () => {
  const service = 'gw-trusted';
  const sink = lineSink();
  let proxied: { upstreamTraceparent: string; requestId: string };
  let loginRequestId: string;
  let forwardAuthStatus: number;
  /** The token this gateway issued at the login, and every request below sends. */
  let issued: string;

  beforeAll(async () => {
    const gw = await tracedGateway(service, {
      trustedProxies: ['127.0.0.1/32'],
      logTo: sink.stream,
    });
    try {
      const login = await fetch(`${gw.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      });
      expect(login.status).toBe(200);
      loginRequestId = login.headers.get('x-request-id') ?? '';
      issued = ((await login.json()) as { access_token: string }).access_token;
      const res = await fetch(`${gw.url}/echo/items?x=1`, {
        headers: {
          authorization: bearer(issued),
          traceparent: clientTraceparent('01'),
          tracestate: 'vendor=client',
        },
      });
      expect(res.status).toBe(200);
      const seen = (await res.json()) as { headers: Record<string, string> };
      expect(seen.headers.tracestate).toBe('vendor=client');
      proxied = {
        upstreamTraceparent: seen.headers.traceparent ?? '',
        requestId: res.headers.get('x-request-id') ?? '',
      };
      expect(
        (await fetch(`${gw.url}/refused/x`, { headers: { authorization: bearer(issued) } })).status,
      ).toBe(502);
      const port = (gw.gateway.forwardAuthServer?.address() as AddressInfo).port;
      const verify = await fetch(`http://127.0.0.1:${port}/auth/verify`, {
        headers: { authorization: bearer(issued) },
      });
      forwardAuthStatus = verify.status;
    } finally {
      await gw.close();
    }
  });

  it('the proxied request continues the client’s trace: server span → client span → the upstream’s traceparent', () => {
    const spans = spansOf(service).filter((s) => s.traceId === CLIENT_TRACE);
    const serverSpan = spans.find((s) => s.kind === SERVER);
    const clientSpan = spans.find((s) => s.kind === CLIENT);
    expect(serverSpan).toMatchObject({ name: 'GET /echo', parentSpanId: CLIENT_SPAN });
    expect(serverSpan?.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/echo',
      'http.response.status_code': 200,
      'tenant_gateway.outcome': 'accepted',
      'tenant_gateway.tenant_id': 'acme',
    });
    expect(serverSpan?.attributes['enduser.id']).toEqual(expect.any(String));
    expect(clientSpan?.parentSpanId).toBe(serverSpan?.spanId);
    expect(clientSpan?.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
    });
    // What the upstream heard is the client span's context, in the client's trace.
    expect(proxied.upstreamTraceparent).toBe(`00-${CLIENT_TRACE}-${clientSpan?.spanId}-01`);
  });

  it('the access log line carries the trace id', () => {
    const line = sink.lines.find(
      (l: Line) => l.msg === 'request' && l.requestId === proxied.requestId,
    );
    expect(line?.traceId).toBe(CLIENT_TRACE);
  });

  it('a login’s span has children for the password check and the store calls', () => {
    const line = sink.lines.find(
      (l: Line) => l.msg === 'request' && l.requestId === loginRequestId,
    );
    const traceId = String(line?.traceId);
    const spans = spansOf(service).filter((s) => s.traceId === traceId);
    const root = spans.find((s) => s.kind === SERVER);
    expect(root).toMatchObject({ name: 'GET api', parentSpanId: '' });
    const children = spans.filter((s) => s.parentSpanId === root?.spanId).map((s) => s.name);
    expect(children).toContain('password.verify');
    expect(children.some((name) => name.startsWith('store.'))).toBe(true);
  });

  it('a 502 the gateway made is an error span, with its reason; the upstream call failed too', () => {
    const serverSpan = spansOf(service).find((s) => s.kind === SERVER && s.name === 'GET /refused');
    expect(serverSpan?.statusCode).toBe(ERROR);
    expect(serverSpan?.attributes).toMatchObject({
      'http.response.status_code': 502,
      'tenant_gateway.outcome': 'failed',
      'tenant_gateway.reason': 'bad_gateway',
    });
    const clientSpan = spansOf(service).find((s) => s.parentSpanId === serverSpan?.spanId);
    expect(clientSpan).toMatchObject({
      kind: CLIENT,
      statusCode: ERROR,
      statusMessage: 'ECONNREFUSED',
    });
  });

  it('forward-auth gets a server span of its own', () => {
    expect(forwardAuthStatus).toBe(200);
    expect(spansOf(service).some((s) => s.kind === SERVER && s.name === 'GET forward-auth')).toBe(
      true,
    );
  });

  it('no span carries a token or a password', () => {
    const exported = JSON.stringify(spansOf(service));
    expect(exported).not.toContain(issued);
    expect(exported).not.toContain(issued.split('.')[2] as string);
    expect(exported).not.toContain(ALICE.password);
    expect(receiver.problems).toEqual([]);
  });
});

describe('with an untrusted client (no trustedProxies)', () => {
  const service = 'gw-untrusted';
  let upstreamTraceparent = '';

  beforeAll(async () => {
    const gw = await tracedGateway(service);
    try {
      // A public route: a login here would be a second server span.
      const res = await fetch(`${gw.url}/open/items`, {
        headers: {
          traceparent: clientTraceparent('01'),
          tracestate: 'vendor=client',
        },
      });
      const seen = (await res.json()) as { headers: Record<string, string> };
      upstreamTraceparent = seen.headers.traceparent ?? '';
      expect(seen.headers.tracestate).toBeUndefined();
    } finally {
      await gw.close();
    }
  });

  it('the client’s traceparent is not continued: a new trace starts, and the upstream hears the gateway’s', () => {
    const [serverSpan, ...others] = spansOf(service).filter((s) => s.kind === SERVER);
    expect(others).toEqual([]);
    expect(serverSpan?.traceId).not.toBe(CLIENT_TRACE);
    expect(serverSpan?.parentSpanId).toBe('');
    const clientSpan = spansOf(service).find((s) => s.kind === CLIENT);
    expect(upstreamTraceparent).toBe(`00-${serverSpan?.traceId}-${clientSpan?.spanId}-01`);
  });
});

describe('sampleRatio 0', () => {
  const service = 'gw-unsampled';
  const heard: string[] = [];

  beforeAll(async () => {
    const gw = await tracedGateway(service, { trustedProxies: ['127.0.0.1/32'], sampleRatio: 0 });
    try {
      for (const traceparent of [undefined, clientTraceparent('01')]) {
        const res = await fetch(`${gw.url}/open/items`, {
          headers: traceparent ? { traceparent } : {},
        });
        heard.push(
          ((await res.json()) as { headers: Record<string, string> }).headers.traceparent ?? '',
        );
      }
    } finally {
      await gw.close();
    }
  });

  it('records no new trace, but still gives the upstream a traceparent (flagged unsampled)', () => {
    expect(heard[0]).toMatch(TRACEPARENT);
    expect(heard[0]?.endsWith('-00')).toBe(true);
    const [, traceId] = TRACEPARENT.exec(heard[0] ?? '') ?? [];
    expect(spansOf(service).filter((s) => s.traceId === traceId)).toEqual([]);
  });

  it('records a trace whose sampled parent came from a trusted proxy', () => {
    expect(heard[1]?.startsWith(`00-${CLIENT_TRACE}-`)).toBe(true);
    expect(heard[1]?.endsWith('-01')).toBe(true);
    expect(spansOf(service).some((s) => s.traceId === CLIENT_TRACE && s.kind === SERVER)).toBe(
      true,
    );
  });
});

/**
 * The last spans are exported when the gateway stops; a collector that is
 * down (the exporter retries it for ~10 s, then fails) or that takes the
 * connection and never answers neither fails the stop nor holds it past
 * FINAL_EXPORT_MS: a CI run met `serve` still running 5 s after SIGTERM,
 * then exiting 1 with the collector's ECONNREFUSED.
 */
describe('a collector that cannot take the last spans', () => {
  const stopWith = async (otlpEndpoint: string): Promise<Line[]> => {
    const sink = lineSink();
    const gw = await tracedGateway('gw-stuck', { otlpEndpoint, logTo: sink.stream });
    expect((await fetch(`${gw.url}/open/items`)).status).toBe(200);
    await gw.close();
    return sink.lines.filter((l) => String(l.msg).startsWith('stopping without the last spans'));
  };

  it('down: the stop succeeds, saying the spans were dropped', async () => {
    const { url } = await refusedUpstream();
    expect(await stopWith(`${url}/v1/traces`)).toHaveLength(1);
  }, 6000);

  it('silent: the stop waits FINAL_EXPORT_MS, not the exporter’s 10 s', async () => {
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { port } = silent.address() as AddressInfo;
      const [line] = await stopWith(`http://127.0.0.1:${port}/v1/traces`);
      expect(line).toMatchObject({ level: 40, waitedMs: FINAL_EXPORT_MS });
      expect(held.size).toBeGreaterThan(0); // the exporter did reach it
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
  }, 6000);
});

describe('tracing off (the default)', () => {
  it('adds nothing: the client’s traceparent and tracestate reach the upstream untouched', async () => {
    const res = await fetch(`${s.fx.gw.url}/echo/items`, {
      headers: {
        authorization: bearer(s.token),
        traceparent: clientTraceparent('01'),
        tracestate: 'vendor=client',
      },
    });
    const seen = (await res.json()) as { headers: Record<string, string> };
    expect(seen.headers.traceparent).toBe(clientTraceparent('01'));
    expect(seen.headers.tracestate).toBe('vendor=client');
  });
});
