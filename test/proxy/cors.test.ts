/**
 * A compiled CORS policy promises: a preflight (OPTIONS with an Origin and
 * Access-Control-Request-Method) is answered 204 by the gateway with the
 * configured methods, headers, credentials and max-age; an actual request's
 * answer gets the origin, credentials and exposed headers; a listed origin
 * (exact, or one wildcard label) is echoed, an unlisted one gets no
 * `Access-Control-Allow-Origin`; and the answer varies on `Origin`, added to
 * any `Vary` already set.
 */
import { IncomingMessage, ServerResponse, type IncomingHttpHeaders } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { CorsConfig } from '../../src/config/index.js';
import { compileCors, type Cors } from '../../src/proxy/decide/cors.js';

const APP = 'https://app.example.com';

/** The schema's defaults, with `overrides`. */
function policy(overrides: Partial<CorsConfig> = {}): Cors {
  return compileCors({
    origins: [APP],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    headers: ['Authorization', 'Content-Type'],
    exposeHeaders: [],
    credentials: false,
    maxAgeSeconds: 600,
    ...overrides,
  });
}

const ORDERS = policy({
  origins: [APP, 'https://*.partner.example'],
  methods: ['GET', 'POST', 'DELETE'],
  headers: ['Authorization', 'Content-Type', 'X-Tenant-Id'],
  exposeHeaders: ['X-Order-Count', 'X-Request-Id'],
  credentials: true,
  maxAgeSeconds: 300,
});

function exchange(method: string, headers: IncomingHttpHeaders) {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.headers = headers;
  const res = new ServerResponse(req);
  return { req, res };
}

/** A browser's preflight from `origin` for a `method` request. */
function preflight(cors: Cors, origin: string | undefined, method = 'POST', extra = {}) {
  const { req, res } = exchange('OPTIONS', {
    ...(origin === undefined ? {} : { origin }),
    'access-control-request-method': method,
    ...extra,
  });
  const answered = cors.preflight(req, res);
  return { answered, res };
}

/** The headers `decorate` sets on the answer to an actual request. */
function decorated(cors: Cors, method: string, headers: IncomingHttpHeaders, vary?: string) {
  const { req, res } = exchange(method, headers);
  if (vary !== undefined) res.setHeader('Vary', vary);
  cors.decorate(req, res);
  return res;
}

describe('preflight', () => {
  it('answers a listed origin 204 with the whole policy', () => {
    const { answered, res } = preflight(ORDERS, APP, 'DELETE', {
      'access-control-request-headers': 'authorization,x-tenant-id',
    });
    expect(answered).toBe(true);
    expect(res.statusCode).toBe(204);
    expect(res.writableEnded).toBe(true);
    expect(res.getHeaders()).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET,POST,DELETE',
      'access-control-allow-headers': 'Authorization,Content-Type,X-Tenant-Id',
      'access-control-allow-credentials': 'true',
      'access-control-max-age': '300',
      'content-length': '0',
      vary: 'Origin',
    });
  });

  it('answers an unlisted origin itself, without Access-Control-Allow-Origin', () => {
    const { answered, res } = preflight(ORDERS, 'https://evil.example');
    expect(answered).toBe(true);
    expect(res.statusCode).toBe(204);
    expect(res.writableEnded).toBe(true);
    expect(res.hasHeader('access-control-allow-origin')).toBe(false);
    expect(res.getHeader('vary')).toBe('Origin');
  });

  it('lists the configured methods whatever method the page asks for', () => {
    const { res } = preflight(ORDERS, APP, 'PUT');
    expect(res.statusCode).toBe(204);
    expect(res.getHeader('access-control-allow-methods')).toBe('GET,POST,DELETE');
  });

  it('lists the configured headers, never the ones the page asks for', () => {
    const { res } = preflight(ORDERS, APP, 'POST', {
      'access-control-request-headers': 'x-secret',
    });
    expect(res.getHeader('access-control-allow-headers')).toBe(
      'Authorization,Content-Type,X-Tenant-Id',
    );
  });

  it('allows no request headers when none are configured', () => {
    const { res } = preflight(policy({ headers: [] }), APP, 'POST', {
      'access-control-request-headers': 'x-secret',
    });
    expect(res.hasHeader('access-control-allow-headers')).toBe(false);
    expect(res.getHeader('vary')).toBe('Origin');
  });

  it('sends no Access-Control-Allow-Credentials without `credentials`', () => {
    const { res } = preflight(policy(), APP);
    expect(res.getHeader('access-control-allow-origin')).toBe(APP);
    expect(res.hasHeader('access-control-allow-credentials')).toBe(false);
  });

  it.each([
    [600, '600'],
    [0, '0'],
    [86_400, '86400'],
  ])('sends max-age %i as %s', (seconds, header) => {
    const { res } = preflight(policy({ maxAgeSeconds: seconds }), APP);
    expect(res.getHeader('access-control-max-age')).toBe(header);
  });

  it('answers any origin with `*` and no Vary when the policy allows any', () => {
    const { res } = preflight(policy({ origins: ['*'] }), 'https://anyone.example');
    expect(res.statusCode).toBe(204);
    expect(res.getHeader('access-control-allow-origin')).toBe('*');
    expect(res.hasHeader('vary')).toBe(false);
  });

  it.each([
    [
      'GET with Origin and a requested method',
      'GET',
      { origin: APP, 'access-control-request-method': 'GET' },
    ],
    ['OPTIONS without Origin', 'OPTIONS', { 'access-control-request-method': 'GET' }],
    ['OPTIONS without a requested method', 'OPTIONS', { origin: APP }],
  ] as const)('leaves a request that is no preflight alone: %s', (_, method, headers) => {
    const { req, res } = exchange(method, { ...headers });
    expect(ORDERS.preflight(req, res)).toBe(false);
    expect(res.getHeaderNames()).toEqual([]);
    expect(res.writableEnded).toBe(false);
    expect(res.statusCode).toBe(200);
  });
});

describe('origins', () => {
  it.each([
    [APP, true],
    ['https://a.partner.example', true],
    ['https://a-1.partner.example', true],
    ['https://partner.example', false],
    ['https://a.b.partner.example', false],
    ['http://a.partner.example', false],
    ['https://a.partner.example.evil.com', false],
    ['https://apartner.example', false],
    ['https://a_b.partner.example', false],
    ['https://app.example.com:443', false],
    ['http://app.example.com', false],
    ['https://app.example.com.evil.com', false],
    ['https://APP.example.com', false],
    ['null', false],
  ])('%s is allowed: %s', (origin, allowed) => {
    const { res } = preflight(ORDERS, origin);
    expect(res.getHeader('access-control-allow-origin')).toBe(allowed ? origin : undefined);
    const actual = decorated(ORDERS, 'GET', { origin });
    expect(actual.getHeader('access-control-allow-origin')).toBe(allowed ? origin : undefined);
  });

  it('reads a wildcard with a port as that port only', () => {
    const cors = policy({ origins: ['https://*.example.com:8443'] });
    expect(
      decorated(cors, 'GET', { origin: 'https://a.example.com:8443' }).getHeader(
        'access-control-allow-origin',
      ),
    ).toBe('https://a.example.com:8443');
    expect(
      decorated(cors, 'GET', { origin: 'https://a.example.com' }).hasHeader(
        'access-control-allow-origin',
      ),
    ).toBe(false);
  });
});

describe('decorate', () => {
  it("sets the origin, credentials and exposed headers on an actual request's answer", () => {
    const res = decorated(ORDERS, 'POST', { origin: APP, authorization: 'Bearer t' });
    expect(res.getHeaders()).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'X-Order-Count,X-Request-Id',
      vary: 'Origin',
    });
    expect(res.writableEnded).toBe(false);
    expect(res.statusCode).toBe(200);
  });

  it('exposes nothing when no headers are configured to be', () => {
    const res = decorated(policy(), 'GET', { origin: APP });
    expect(res.hasHeader('access-control-expose-headers')).toBe(false);
  });

  it('varies on Origin even for a request without one', () => {
    const res = decorated(ORDERS, 'GET', {});
    expect(res.hasHeader('access-control-allow-origin')).toBe(false);
    expect(res.getHeader('vary')).toBe('Origin');
  });

  it('adds Origin to a Vary already set', () => {
    const res = decorated(ORDERS, 'GET', { origin: APP }, 'Accept-Encoding');
    expect(res.getHeader('vary')).toBe('Accept-Encoding, Origin');
  });

  it('treats an OPTIONS that is no preflight as an actual request, leaving it unanswered', () => {
    const res = decorated(ORDERS, 'OPTIONS', { origin: APP });
    expect(res.getHeader('access-control-allow-origin')).toBe(APP);
    expect(res.hasHeader('access-control-allow-methods')).toBe(false);
    expect(res.hasHeader('access-control-max-age')).toBe(false);
    expect(res.writableEnded).toBe(false);
    expect(res.statusCode).toBe(200);
  });

  it('answers any origin with `*` when the policy allows any', () => {
    const res = decorated(policy({ origins: ['*'] }), 'GET', { origin: 'https://anyone.example' });
    expect(res.getHeader('access-control-allow-origin')).toBe('*');
    expect(res.hasHeader('access-control-allow-credentials')).toBe(false);
  });
});
