/**
 * Issue 15: CORS as a real browser enforces it. A headless Chromium opens a
 * page on an origin of its own and calls the gateway (another origin) with
 * `fetch`: the browser decides when to preflight, what it sends, whether the
 * page may read the answer and whether the actual request is sent at all.
 * The upstream's log says what reached it. cors-routes.test.ts checks the
 * same policy header for header; this file checks that a browser agrees.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import { startBrowser, startPageOrigin, type PageOrigin } from '../support/browser.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startUpstream, type CountingUpstream } from '../support/upstream.js';

let fx: IdentityFixture;
let upstream: CountingUpstream;
let browser: Browser;
let app: PageOrigin;
let stranger: PageOrigin;
let appPage: Page;
let strangerPage: Page;

beforeAll(async () => {
  // An upstream that would let anyone in: the gateway's policy must decide.
  upstream = await startUpstream((req, res, record) => {
    req.on('end', () => {
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'access-control-allow-origin': '*',
          'x-order-count': '3',
          'x-internal': 'not exposed',
        })
        .end(JSON.stringify({ method: record.method, headers: record.headers }));
    });
  });
  [app, stranger] = await Promise.all([startPageOrigin(), startPageOrigin()]);
  fx = await startMemoryIdentityFixture({
    cors: { origins: [app.origin] },
    routes: [
      {
        prefix: '/orders',
        upstream: upstream.url,
        tenant: { header: 'X-Tenant-Id' },
        cors: {
          origins: [app.origin],
          methods: ['GET', 'POST'],
          headers: ['Authorization', 'Content-Type', 'X-Tenant-Id'],
          exposeHeaders: ['X-Order-Count'],
          credentials: true,
        },
      },
      { prefix: '/plain', upstream: upstream.url },
    ],
  });
  browser = await startBrowser();
  [appPage, strangerPage] = await Promise.all([app.open(browser), stranger.open(browser)]);
});

afterAll(async () => {
  await browser?.close();
  await fx?.close();
  await Promise.all([upstream?.close(), app?.close(), stranger?.close()]);
});

/** What the page's script could see of one `fetch`. */
type Seen =
  | { ok: true; status: number; body: string; headers: Record<string, string | null> }
  | { ok: false; error: string };

interface Call {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  credentials?: 'omit' | 'include';
  /** Response headers the script tries to read. */
  read?: string[];
}

/** Runs `fetch` inside the page, as the page's own script would. */
function fetchIn(page: Page, call: Call): Promise<Seen> {
  return page.evaluate(async (c: Call): Promise<Seen> => {
    try {
      const res = await fetch(c.url, {
        method: c.method ?? 'GET',
        headers: c.headers,
        body: c.body,
        credentials: c.credentials ?? 'omit',
        mode: 'cors',
      });
      const headers: Record<string, string | null> = {};
      for (const name of c.read ?? []) headers[name] = res.headers.get(name);
      return { ok: true, status: res.status, body: await res.text(), headers };
    } catch (err) {
      return { ok: false, error: String(err) };
    }
  }, call);
}

/** The app logs in from the browser: Basic on /1/token, which needs a preflight. */
async function loginFromApp(): Promise<string> {
  const seen = await fetchIn(appPage, {
    url: `${fx.gw.url}/1/token?tenant_id=acme`,
    headers: { authorization: basic(ALICE.email, ALICE.password) },
  });
  if (!seen.ok || seen.status !== 200) throw new Error(`login failed: ${JSON.stringify(seen)}`);
  return (JSON.parse(seen.body) as { access_token: string }).access_token;
}

/** What a page sees of a request the browser refused to send, or whose answer it withheld. */
const BLOCKED = { ok: false, error: expect.stringContaining('Failed to fetch') };

function methodsSince(before: number): string[] {
  return upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`);
}

describe('a browser app on a listed origin', () => {
  it('logs in, calls the route with its token and reads the answer and the exposed header only', async () => {
    const token = await loginFromApp();
    const before = upstream.requests.length;
    const seen = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders/1`,
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' },
      credentials: 'include',
      read: ['x-order-count', 'x-internal'],
    });
    expect(seen).toMatchObject({ ok: true, status: 200 });
    if (!seen.ok) return;
    expect(seen.headers).toEqual({ 'x-order-count': '3', 'x-internal': null });
    const heard = JSON.parse(seen.body) as { method: string; headers: Record<string, string> };
    expect(heard.method).toBe('GET');
    expect(heard.headers['x-tenant-id']).toBe('acme');
    expect(heard.headers.origin).toBe(app.origin);
    // The gateway answered the preflight: only the actual request reached the upstream.
    expect(methodsSince(before)).toEqual(['GET /orders/1']);
  });

  it("reads the gateway's own refusals: 401 without a token, 403 for another tenant", async () => {
    const token = await loginFromApp();
    const noToken = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders/1`,
      headers: { 'x-tenant-id': 'acme' },
    });
    const otherTenant = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders/1`,
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'globex' },
    });
    expect(noToken).toMatchObject({ ok: true, status: 401 });
    expect(otherTenant).toMatchObject({ ok: true, status: 403 });
    if (!noToken.ok || !otherTenant.ok) return;
    expect(JSON.parse(noToken.body).error).toBe('invalid_token');
    expect(JSON.parse(otherTenant.body).error).toBe('tenant_mismatch');
  });

  it('posts a JSON body (preflighted for its Content-Type) and it arrives', async () => {
    const token = await loginFromApp();
    const before = upstream.requests.length;
    const seen = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders`,
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'x-tenant-id': 'acme',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ item: 'anvil' }),
    });
    expect(seen).toMatchObject({ ok: true, status: 200 });
    expect(methodsSince(before)).toEqual(['POST /orders']);
    expect(upstream.requests.at(-1)?.bodyLength).toBe('{"item":"anvil"}'.length);
  });

  it('a method or a header the route does not allow: the browser never sends the request', async () => {
    const token = await loginFromApp();
    const before = upstream.requests.length;
    const put = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders/1`,
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' },
    });
    const extraHeader = await fetchIn(appPage, {
      url: `${fx.gw.url}/orders/1`,
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme', 'x-debug': '1' },
    });
    expect(put).toMatchObject(BLOCKED);
    expect(extraHeader).toMatchObject(BLOCKED);
    expect(methodsSince(before)).toEqual([]);
  });
});

describe('a browser app on an origin not listed', () => {
  it('can neither log in nor reach the route, and the upstream hears nothing', async () => {
    const token = await loginFromApp();
    const before = upstream.requests.length;
    const login = await fetchIn(strangerPage, {
      url: `${fx.gw.url}/1/token?tenant_id=acme`,
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    // The stranger holds a stolen token: the browser still refuses to send it.
    const call = await fetchIn(strangerPage, {
      url: `${fx.gw.url}/orders/1`,
      headers: { authorization: `Bearer ${token}`, 'x-tenant-id': 'acme' },
    });
    expect(login).toMatchObject(BLOCKED);
    expect(call).toMatchObject(BLOCKED);
    expect(methodsSince(before)).toEqual([]);
  });
});

describe('a route without cors', () => {
  it("is not opened to browsers by the upstream's own CORS headers: the preflight needs a token", async () => {
    const token = await loginFromApp();
    const before = upstream.requests.length;
    const seen = await fetchIn(appPage, {
      url: `${fx.gw.url}/plain/1`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(seen).toMatchObject(BLOCKED);
    expect(methodsSince(before)).toEqual([]);
  });
});
