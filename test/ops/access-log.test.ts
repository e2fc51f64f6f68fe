/**
 * The access line is built by hand, not by pino's serializer: it must still
 * be the JSON line pino would write for the same fields — level, time, the
 * logger's bindings, every field escaped, undefined ones left out, `msg` last
 * — on the logger's own destination, at the logger's level.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAccessLog, epochMillisText, type AccessLine } from '../../src/ops/access-log.js';
import { createLogger } from '../../src/ops/logger.js';
import type { RequestScope } from '../../src/http/scope.js';

function capture(level = 'info') {
  const sink = new PassThrough();
  const lines: string[] = [];
  sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { log: createLogger({ level, destination: sink }), lines };
}

function line(overrides: Partial<AccessLine> = {}, scope: Partial<RequestScope> = {}): AccessLine {
  return {
    req: {
      method: 'GET',
      headers: { 'user-agent': 'curl/8 "quoted" \\ back ünï \u2028 sep' },
    } as unknown as IncomingMessage,
    url: '/orders/"a"\\b?token=secret',
    scope: { requestId: 'r-1', route: '/orders', ...scope } as RequestScope,
    settled: { status: 200, outcome: 'accepted', reason: '' },
    durationMs: 1.23456,
    bytesIn: 0,
    bytesOut: 321,
    clientIp: '192.0.2.1',
    original: undefined,
    ...overrides,
  };
}

describe('the access line', () => {
  it('is the JSON pino writes: level, time, bindings, the fields escaped, msg last', () => {
    const { log, lines } = capture();
    const before = Date.now();
    createAccessLog(log).write(
      'info',
      line({}, { tenantId: 'acme', userId: 'u-1', upstreamMs: 0.5, upstreamStatus: 200 }),
    );
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(parsed).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'tenant-gateway',
      requestId: 'r-1',
      method: 'GET',
      path: '/orders/"a"\\b',
      route: '/orders',
      status: 200,
      outcome: 'accepted',
      durationMs: 1.23,
      upstreamMs: 0.5,
      upstreamStatus: 200,
      tenantId: 'acme',
      userId: 'u-1',
      clientIp: '192.0.2.1',
      userAgent: 'curl/8 "quoted" \\ back ünï \u2028 sep',
      bytesIn: 0,
      bytesOut: 321,
      msg: 'request',
    });
    expect(parsed.time as number).toBeGreaterThanOrEqual(before);
    expect(Object.keys(parsed).slice(0, 3)).toEqual(['level', 'time', 'service']);
    expect(Object.keys(parsed).at(-1)).toBe('msg');
    // Never the query: it may carry credentials.
    expect(lines[0]).not.toContain('secret');
  });

  it('carries the reason of a refusal, the original request of forward-auth, the trace id', () => {
    const { log, lines } = capture();
    createAccessLog(log).write(
      'info',
      line(
        {
          settled: { status: 403, outcome: 'refused', reason: 'tenant_mismatch' },
          original: { method: 'POST', host: undefined, uri: '/orders/globex' },
        },
        { trace: { traceId: '0af7651916cd43dd8448eb211c80319c' } as RequestScope['trace'] },
      ),
    );
    const parsed = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      status: 403,
      outcome: 'refused',
      reason: 'tenant_mismatch',
      original: { method: 'POST', uri: '/orders/globex' },
    });
    expect(parsed.original).not.toHaveProperty('host');
  });

  it('escapes U+2028, U+2029, DEL and C1 controls in what a client chose: one line, the same values', () => {
    const { log, lines } = capture();
    // A header value as Node hands it over, one character per byte: C1
    // controls, and U+00E2 U+0080 U+00A8 for the UTF-8 of U+2028 (Node
    // refuses DEL and the C0 controls but tab there).
    const header = `{"event":"forged"}\u0085\u009b[31m${Buffer.from('\u2028').toString('latin1')}`;
    // A tenant named in a path or query, decoded: anything.
    const forged = '\u2028{"event":"forged"}\u2029\u0085\u009b[31m\u007f';
    createAccessLog(log).write(
      'info',
      line(
        {
          req: { method: 'GET', headers: { 'user-agent': header } } as unknown as IncomingMessage,
          clientIp: header,
          settled: {
            status: 403,
            outcome: 'refused',
            reason: 'tenant_mismatch',
            requestedTenant: forged,
          },
          original: { method: header, host: header, uri: header },
        },
        { userId: 'u-1', tenantId: 'acme' },
      ),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\u007f-\u009f\u2028\u2029]/);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      userAgent: header,
      clientIp: header,
      requestedTenant: forged,
      original: { method: header, host: header, uri: header },
      userId: 'u-1',
      tenantId: 'acme',
    });
  });

  it('carries why a token was refused', () => {
    const { log, lines } = capture();
    createAccessLog(log).write(
      'info',
      line({
        settled: {
          status: 401,
          outcome: 'refused',
          reason: 'invalid_token',
          tokenRefusal: 'expired',
        },
      }),
    );
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      reason: 'invalid_token',
      tokenRefusal: 'expired',
    });
  });

  it('cuts a user agent at 256 characters', () => {
    const { log, lines } = capture();
    const req = {
      method: 'GET',
      headers: { 'user-agent': 'x'.repeat(5000) },
    } as unknown as IncomingMessage;
    createAccessLog(log).write('info', line({ req }));
    expect((JSON.parse(lines[0] as string) as { userAgent: string }).userAgent).toHaveLength(256);
  });

  it('follows the logger level: debug lines only when debug is on', () => {
    const info = capture('info');
    const access = createAccessLog(info.log);
    expect(access.enabled('debug')).toBe(false);
    expect(access.enabled('info')).toBe(true);
    const debug = capture('debug');
    createAccessLog(debug.log).write('debug', line());
    expect((JSON.parse(debug.lines[0] as string) as { level: number }).level).toBe(20);
  });

  it('escapes a route label, tenant or user id that needs it, the first time and from its cache', () => {
    const { log, lines } = capture();
    const access = createAccessLog(log);
    const odd = { route: 'r"\\\u0001', tenantId: 't"1', userId: 'u\\\n2' };
    for (let i = 0; i < 2; i++) access.write('info', line({}, odd));
    expect(lines).toHaveLength(2);
    for (const text of lines) {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect([parsed.route, parsed.tenantId, parsed.userId]).toEqual([
        odd.route,
        odd.tenantId,
        odd.userId,
      ]);
    }
  });

  it('writes the time as JavaScript writes Date.now(): every millisecond of a second, across seconds', () => {
    const now = Date.now();
    const second = Math.floor(now / 1000) * 1000;
    const samples = [0, 7, 999, 1000, 1001, 1_000_000, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER, now];
    for (let ms = 0; ms < 2000; ms++) samples.push(second + ms);
    // Back in time too (a clock stepped back): the second's text is made again.
    for (let ms = 0; ms < 5; ms++) samples.push(second - 1000 + ms * 499);
    for (const t of samples) expect(epochMillisText(t)).toBe(String(t));
  });
});
