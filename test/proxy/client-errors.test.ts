/**
 * Issue 12, class 7: the answers Node's HTTP server gives on its own (bad
 * framing, huge headers, slow clients, unknown expectations) are the JSON
 * error of DESIGN §1 like every other refusal, with `X-Request-Id` and
 * `Connection: close`. Tested over raw sockets, since no HTTP client would
 * send these.
 */
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../src/config/index.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { bearer, startTestGateway } from '../support/gateway.js';
import { startEchoUpstream } from '../support/upstream.js';

const escaped: unknown[] = [];
const onUncaught = (err: unknown): void => void escaped.push(err);
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUncaught);

const HEADERS_TIMEOUT_MS = 500;

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    server: { headersTimeoutMs: HEADERS_TIMEOUT_MS },
    limits: { requestTimeoutMs: 10_000 },
    routes: [{ prefix: '/echo', upstream: echo.url }],
  }),
  { token: true },
);
let port: number;
let auth: string;

beforeAll(() => {
  port = Number(new URL(s.fx.gw.url).port);
  auth = bearer(s.token);
});

afterAll(() => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The gateway closed the connection after answering. */
  closed: boolean;
}

/**
 * Writes `parts` on a fresh socket (`pauseMs` apart), reads until the gateway
 * closes it (or 10 s pass), and parses the one answer.
 */
function exchange(parts: (string | Buffer)[], pauseMs = 0, to = port): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: to });
    const chunks: Buffer[] = [];
    let closed = false;
    const done = (): void => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text
        .slice(0, split < 0 ? text.length : split)
        .split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0),
        headers,
        body: split < 0 ? '' : text.slice(split + 4),
        closed,
      });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      closed = true;
      socket.end();
    });
    socket.on('close', done);
    socket.on('error', (err) => (chunks.length > 0 ? undefined : reject(err)));
    socket.setTimeout(10_000, () => socket.destroy());
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  });
}

/** The JSON error of DESIGN §1, on a connection the gateway closes. */
function expectRawError(answer: RawAnswer, status: number, code: string): void {
  expect({ status: answer.status, body: answer.body }).toMatchObject({ status });
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(answer.headers.connection).toBe('close');
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  const body = JSON.parse(answer.body) as { error: string; error_description: string };
  expect(body.error).toBe(code);
  expect(body.error_description.length).toBeGreaterThan(0);
  expect(answer.closed).toBe(true);
}

describe("Node's own refusals are the JSON error with a request id", () => {
  it('headers over 16 KiB: 431 headers_too_large', async () => {
    const answer = await exchange([
      `GET /echo/x HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]);
    expectRawError(answer, 431, 'headers_too_large');
  });

  it('a malformed request line: 400 invalid_request', async () => {
    const answer = await exchange(['GET /echo/x HTTP/1.1 trailing-junk\r\nHost: gw\r\n\r\n']);
    expectRawError(answer, 400, 'invalid_request');
  });

  it('not HTTP at all: 400 invalid_request', async () => {
    expectRawError(
      await exchange(['\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n']),
      400,
      'invalid_request',
    );
  });

  it('both Content-Length and Transfer-Encoding: 400 invalid_request, nothing forwarded', async () => {
    const before = s.up.echo.counts.received;
    const answer = await exchange([
      `POST /echo/smuggle HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\n` +
        'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]);
    expectRawError(answer, 400, 'invalid_request');
    expect(s.up.echo.counts.received).toBe(before);
  });

  it('bad chunk framing in a proxied body: 400 invalid_request with the request id', async () => {
    const answer = await exchange(
      [
        `POST /echo/chunks HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\n` +
          'X-Request-Id: bad-chunks-1\r\nTransfer-Encoding: chunked\r\n\r\n',
        '5\r\nhello\r\nzz\r\nnot a chunk size\r\n',
      ],
      100,
    );
    expectRawError(answer, 400, 'invalid_request');
    expect(answer.headers['x-request-id']).toBe('bad-chunks-1');
  });

  it('an Expect other than 100-continue: 417 expectation_failed', async () => {
    const answer = await exchange([
      `GET /echo/x HTTP/1.1\r\nHost: gw\r\nAuthorization: ${auth}\r\nExpect: foo\r\n\r\n`,
    ]);
    expectRawError(answer, 417, 'expectation_failed');
  });

  it('headers not finished within server.headersTimeoutMs: 408 request_timeout', async () => {
    const started = Date.now();
    const answer = await exchange(['GET /echo/slow HTTP/1.1\r\n', 'Host: gw\r\n'], 100);
    expectRawError(answer, 408, 'request_timeout');
    // Answered by the configured timeout, not Node's 60 s default.
    expect(Date.now() - started).toBeLessThan(8000);
  });

  it('a well-formed request on the same listener is still served', async () => {
    const res = await fetch(`${s.fx.gw.url}/echo/fine`, { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ url: '/echo/fine' });
  });

  it('saw no uncaught exception nor unhandled rejection', () => {
    expect(escaped).toEqual([]);
  });
});

describe('server.headersTimeoutMs and limits.requestTimeoutMs', () => {
  const problems = ({
    headersTimeoutMs,
    requestTimeoutMs,
  }: {
    headersTimeoutMs?: number;
    requestTimeoutMs?: number;
  }): string[] => {
    try {
      validateConfig(
        { server: { headersTimeoutMs }, limits: { requestTimeoutMs } },
        process.cwd(),
        'test',
      );
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('a headers timeout longer than a request timeout names its key path; none is set by default', () => {
    expect(problems({ headersTimeoutMs: 5000, requestTimeoutMs: 1000 })).toEqual([
      expect.stringMatching(/^server\.headersTimeoutMs: .*requestTimeoutMs \(1000\)/),
    ]);
    expect(problems({ headersTimeoutMs: 400_000 })).toEqual([]);
    expect(problems({ headersTimeoutMs: 10 })).toEqual([
      expect.stringMatching(/^server\.headersTimeoutMs: /),
    ]);
  });

  it('limits.headersTimeoutMs is refused with the key it moved to', () => {
    try {
      validateConfig({ limits: { headersTimeoutMs: 1000 } }, process.cwd(), 'test');
      expect.unreachable('accepted a moved key');
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'limits.headersTimeoutMs: moved to server.headersTimeoutMs',
      ]);
    }
  });
});

describe('the admin listener', () => {
  it("answers Node's own refusals with the JSON error too", async () => {
    const gw = await startTestGateway({ ...s.fx.config, admin: { host: '127.0.0.1', port: 0 } });
    try {
      const admin = (gw.gateway.adminServer?.address() as AddressInfo).port;
      expectRawError(
        await exchange(['GET /metrics HTTP/1.1 trailing-junk\r\nHost: gw\r\n\r\n'], 0, admin),
        400,
        'invalid_request',
      );
    } finally {
      await gw.close();
    }
  });
});
