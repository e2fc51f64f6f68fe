/**
 * Issue 20: every request ends in one outcome record — the status the client
 * saw, accepted / refused / failed, a reason — and the request counter, the
 * histograms and the access log line all say the same. Real upstreams that
 * refuse, reset, hang and break mid-answer; the metrics read from `/metrics`
 * on the admin listener, the log lines from the gateway's own pino output.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, basic, bearer, startTestGateway } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { lineOf as loggedLine } from '../support/log-lines.js';
import type { Line } from '../support/log-sink.js';
import { scrape, total, type Sample } from '../support/prometheus-text.js';
import {
  refusedUpstream,
  startBreakingUpstream,
  startEchoUpstream,
  startSlowUpstream,
} from '../support/upstream.js';

const s = fixtureSuite(
  {
    echo: startEchoUpstream,
    refused: refusedUpstream,
    resetting: () => startBreakingUpstream('on-request'),
    breaking: () => startBreakingUpstream('mid-response'),
    slow: () => startSlowUpstream(),
    hanging: () => startSlowUpstream(),
  },
  ({ echo, refused, resetting, breaking, slow, hanging }) => ({
    routes: [
      { prefix: '/echo', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/refused', upstream: refused.url },
      { prefix: '/reset', upstream: resetting.url },
      { prefix: '/broken', upstream: breaking.url },
      { prefix: '/slow', upstream: slow.url, timeoutMs: 300 },
      { prefix: '/hang', upstream: hanging.url },
      { prefix: '/checked', hosts: ['app.example.com'] },
      { prefix: '/shop', hosts: ['a.example.com'], upstream: echo.url },
      { prefix: '/shop', hosts: ['b.example.com', '*.b.example.com'], upstream: echo.url },
    ],
  }),
  // One request in flight per tenant per upstream: the second is 429.
  { logged: { upstreamPool: { maxConnections: 4, maxPerTenant: 1 } }, token: true },
);
let auth: string;
beforeAll(() => {
  auth = bearer(s.token);
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${s.gw.url}${path}`, { headers: { authorization: auth, ...headers } });

/** The access log line of the request whose answer carried `res`'s request id. */
function lineOf(res: Response | string): Promise<Line> {
  return loggedLine(s.lines, typeof res === 'string' ? res : res.headers.get('x-request-id'));
}

/** The change of each named series between two scrapes around `act`. */
async function around(
  act: () => Promise<void>,
): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape(adminUrlOf(s.gw));
  await act();
  // The record is written when the response closes, which may trail the client's read.
  await delay(50);
  const after: Sample[] = await scrape(adminUrlOf(s.gw));
  return (name, labels = {}) => total(after, name, labels) - total(before, name, labels);
}

describe('gateway-made failures are failed, with their reason, in every signal', () => {
  it('502 from a refused upstream', async () => {
    let res!: Response;
    const delta = await around(async () => {
      res = await get('/refused/x');
      expect(res.status).toBe(502);
    });
    const labels = {
      route: '/refused',
      method: 'GET',
      code: '502',
      outcome: 'failed',
      reason: 'bad_gateway',
    };
    expect(delta('tenant_gateway_requests_total', labels)).toBe(1);
    expect(delta('tenant_gateway_requests_total', { route: '/refused', outcome: 'accepted' })).toBe(
      0,
    );
    expect(
      delta('tenant_gateway_upstream_duration_seconds_count', {
        route: '/refused',
        outcome: 'failed',
      }),
    ).toBe(1);
    expect(
      delta('tenant_gateway_request_duration_seconds_count', {
        route: '/refused',
        outcome: 'failed',
      }),
    ).toBe(1);
    const line = await lineOf(res);
    expect(line).toMatchObject({
      status: 502,
      outcome: 'failed',
      reason: 'bad_gateway',
      route: '/refused',
    });
    expect(typeof line.upstreamMs).toBe('number');
  });

  it('502 from an upstream that resets the connection, 504 from one that does not answer in time', async () => {
    let reset!: Response;
    let slow!: Response;
    const delta = await around(async () => {
      reset = await get('/reset/x');
      slow = await get('/slow/x');
    });
    expect([reset.status, slow.status]).toEqual([502, 504]);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/reset',
        code: '502',
        outcome: 'failed',
        reason: 'bad_gateway',
      }),
    ).toBe(1);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/slow',
        code: '504',
        outcome: 'failed',
        reason: 'gateway_timeout',
      }),
    ).toBe(1);
    expect(
      delta('tenant_gateway_upstream_duration_seconds_count', {
        route: '/slow',
        outcome: 'failed',
      }),
    ).toBe(1);
    expect(await lineOf(slow)).toMatchObject({
      status: 504,
      outcome: 'failed',
      reason: 'gateway_timeout',
    });
  });

  it('an upstream that breaks mid-answer: the status it began with, failed, upstream_broke', async () => {
    let id = '';
    const delta = await around(async () => {
      id = await cutResponse('/broken/x');
    });
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/broken',
        code: '200',
        outcome: 'failed',
        reason: 'upstream_broke',
      }),
    ).toBe(1);
    expect(delta('tenant_gateway_requests_total', { route: '/broken', outcome: 'accepted' })).toBe(
      0,
    );
    expect(await lineOf(id)).toMatchObject({
      status: 200,
      upstreamStatus: 200,
      outcome: 'failed',
      reason: 'upstream_broke',
    });
  });

  it('a client that leaves before the answer: 499 client_closed, and the in-flight gauge follows it', async () => {
    const req = request(`${s.gw.url}/hang/x`, { headers: { authorization: auth } });
    req.on('error', () => {});
    req.end();
    await delay(200);
    expect(total(await scrape(adminUrlOf(s.gw)), 'tenant_gateway_requests_in_flight')).toBe(1);
    const delta = await around(async () => {
      req.destroy();
      await delay(100);
    });
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/hang',
        code: '499',
        outcome: 'failed',
        reason: 'client_closed',
      }),
    ).toBe(1);
    expect(total(await scrape(adminUrlOf(s.gw)), 'tenant_gateway_requests_in_flight')).toBe(0);
  });
});

describe('refusals', () => {
  it('a tenant past its upstream share is refused 429 on its route, never counted as a failed login', async () => {
    const holder = request(`${s.gw.url}/hang/a`, { headers: { authorization: auth } });
    holder.on('error', () => {});
    holder.end();
    await delay(150);
    let res!: Response;
    const delta = await around(async () => {
      res = await get('/hang/b');
    });
    holder.destroy();
    expect(res.status).toBe(429);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/hang',
        code: '429',
        outcome: 'refused',
        reason: 'too_many_requests',
      }),
    ).toBe(1);
    expect(delta('tenant_gateway_login_failures_total')).toBe(0);
  });

  it('a wrong password on the token endpoint is a login failure', async () => {
    const delta = await around(async () => {
      const res = await fetch(`${s.gw.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, 'wrong-password-1') },
      });
      expect(res.status).toBe(401);
    });
    expect(delta('tenant_gateway_login_failures_total', { reason: 'invalid_credentials' })).toBe(1);
    expect(
      delta('tenant_gateway_requests_total', {
        route: 'api',
        code: '401',
        outcome: 'refused',
        reason: 'invalid_credentials',
      }),
    ).toBe(1);
  });
});

describe('the access log line', () => {
  it('carries client, agent, bytes both ways and the upstream status; never the token or the query', async () => {
    const body = 'hello';
    const res = await fetch(`${s.gw.url}/echo/items?secret=s3cr3t`, {
      method: 'POST',
      headers: {
        authorization: auth,
        'x-tenant-id': 'acme',
        'user-agent': 'probe/1.0',
        'content-type': 'text/plain',
      },
      body,
    });
    expect(res.status).toBe(200);
    const answer = await res.arrayBuffer();
    const line = await lineOf(res);
    expect(line).toMatchObject({
      method: 'POST',
      path: '/echo/items',
      route: '/echo',
      status: 200,
      outcome: 'accepted',
      upstreamStatus: 200,
      clientIp: '127.0.0.1',
      userAgent: 'probe/1.0',
      bytesIn: body.length,
      tenantId: 'acme',
    });
    expect(line.reason).toBeUndefined();
    expect(line.bytesOut as number).toBeGreaterThan(answer.byteLength);
    const text = JSON.stringify(line);
    expect(text).not.toContain(s.token);
    expect(text).not.toContain('s3cr3t');
  });

  it('forward-auth lines name the original method, host and URI (without the query), with their own latency series', async () => {
    let res!: Response;
    const delta = await around(async () => {
      res = await fetch(`${s.gw.url}/auth/verify`, {
        headers: {
          authorization: auth,
          'x-original-method': 'DELETE',
          'x-original-url': 'https://app.example.com/checked/7?token=abc',
        },
      });
    });
    expect(res.status).toBe(200);
    expect(
      delta('tenant_gateway_request_duration_seconds_count', {
        route: 'forward-auth',
        outcome: 'accepted',
      }),
    ).toBe(1);
    expect(await lineOf(res)).toMatchObject({
      route: 'forward-auth',
      status: 200,
      original: { method: 'DELETE', host: 'app.example.com', uri: '/checked/7' },
    });
  });

  it('probes and scrapes of the admin listener log at debug, not info', async () => {
    const res = await fetch(`${adminUrlOf(s.gw)}/healthz`);
    expect(res.status).toBe(200);
    const line = await lineOf(res);
    expect(line).toMatchObject({ route: 'admin', status: 200, level: 20 });
  });
});

describe('the rest of the metrics', () => {
  it('routes with one prefix on different hosts are counted apart', async () => {
    const delta = await around(async () => {
      for (const host of ['a.example.com', 'b.example.com', 'x.b.example.com'])
        expect(await statusOf(`${s.gw.url}/shop/1`, { host, authorization: auth })).toBe(200);
    });
    expect(delta('tenant_gateway_requests_total', { route: 'a.example.com/shop' })).toBe(1);
    expect(
      delta('tenant_gateway_requests_total', { route: 'b.example.com,*.b.example.com/shop' }),
    ).toBe(2);
  });

  it("Node's defaults unprefixed, build info, key age, caches as counters, store and bcrypt timing", async () => {
    const samples = await scrape(adminUrlOf(s.gw));
    expect(total(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name.startsWith('tenant_gateway_process_'))).toBe(false);
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string })
      .version;
    expect(total(samples, 'tenant_gateway_build_info', { version })).toBe(1);
    const age = total(samples, 'tenant_gateway_signing_key_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(3600);
    expect(
      total(samples, 'tenant_gateway_cache_lookups_total', { cache: 'verified_tokens' }),
    ).toBeGreaterThan(0);
    expect(
      total(samples, 'tenant_gateway_store_command_duration_seconds_count', {
        operation: 'findUserByEmail',
        result: 'ok',
      }),
    ).toBeGreaterThan(0);
    expect(total(samples, 'tenant_gateway_password_wait_seconds_count')).toBeGreaterThan(0);
    expect(total(samples, 'tenant_gateway_store_up')).toBe(1);
    expect(
      total(samples, 'tenant_gateway_config_last_reload_success_timestamp_seconds'),
    ).toBeGreaterThan(Date.now() / 1000 - 600);
  });

  it('bytes by route, and a logout counted as a session event', async () => {
    const own = (await tokenFor(s.gw.url, ALICE, 'acme')).access_token;
    let answered = 0;
    const delta = await around(async () => {
      const echo = await fetch(`${s.gw.url}/echo/b`, {
        method: 'PUT',
        headers: { authorization: bearer(own), 'x-tenant-id': 'acme' },
        body: 'x'.repeat(1000),
      });
      expect(echo.status).toBe(200);
      answered = (await echo.arrayBuffer()).byteLength;
      const logout = await fetch(`${s.gw.url}/1/token`, {
        method: 'DELETE',
        headers: { authorization: bearer(own) },
      });
      expect(logout.status).toBe(204);
    });
    expect(delta('tenant_gateway_request_bytes_total', { route: '/echo' })).toBe(1000);
    // The body the client read, and the response head besides.
    expect(delta('tenant_gateway_response_bytes_total', { route: '/echo' })).toBeGreaterThan(
      answered + 'HTTP/1.1 200 OK\r\n\r\n'.length,
    );
    expect(
      delta('tenant_gateway_session_events_total', { kind: 'token-revoked' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('a request Node times out while it is handled', () => {
  it('is recorded once, with the 408 the client saw', async () => {
    const strict = await startTestGateway(
      {
        ...s.fx.config,
        admin: { host: '127.0.0.1', port: 0 },
        limits: { requestTimeoutMs: 1000 },
        server: { headersTimeoutMs: 500 },
      },
      { logTo: s.logTo },
    );
    try {
      const strictAdmin = adminUrlOf(strict);
      // A store of its own: a token of this gateway.
      const own = bearer((await tokenFor(strict.url, ALICE, 'acme')).access_token);
      const before = await scrape(strictAdmin);
      const { status, requestId } = await trickleUpload(strict.url, '/echo/upload', 3000, own);
      expect(status).toBe(408);
      await delay(100);
      const after = await scrape(strictAdmin);
      // Every request but the scrapes themselves (route admin).
      const delta = (labels: Record<string, string>) =>
        [after, before]
          .map((samples) =>
            samples
              .filter((s) => s.labels.route !== 'admin')
              .reduce((sum, s) => sum + total([s], 'tenant_gateway_requests_total', labels), 0),
          )
          .reduce((a, b) => a - b);
      expect(delta({})).toBe(1);
      expect(
        delta({ route: '/echo', code: '408', outcome: 'refused', reason: 'request_timeout' }),
      ).toBe(1);
      expect(await lineOf(requestId)).toMatchObject({
        route: '/echo',
        status: 408,
        outcome: 'refused',
        reason: 'request_timeout',
      });
    } finally {
      await strict.close();
    }
  });
});

/** The status of a GET with these headers (Host included, which fetch will not send). */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

/** Reads a response the upstream cuts; resolves with its request id once the connection is gone. */
function cutResponse(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.gw.url}${path}`, { headers: { authorization: auth } }, (res) => {
      const id = res.headers['x-request-id'] as string;
      res.on('data', () => {});
      res.on('error', () => resolve(id));
      res.on('close', () => resolve(id));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A POST whose body arrives 16 bytes at a time, every 200 ms, for `ms`;
 * resolves with the status of the answer and its request id.
 */
function trickleUpload(
  base: string,
  path: string,
  ms: number,
  authorization = auth,
): Promise<{ status: number; requestId: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: 'POST',
        headers: { authorization, 'x-tenant-id': 'acme', 'content-length': String(1 << 20) },
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, requestId: res.headers['x-request-id'] as string });
        clearInterval(timer);
        req.destroy();
      },
    );
    req.on('error', reject);
    const timer = setInterval(() => req.write(Buffer.alloc(16, 0x61)), 200);
    setTimeout(() => {
      clearInterval(timer);
      req.destroy();
    }, ms);
  });
}
