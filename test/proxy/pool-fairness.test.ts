/**
 * Issue 12, class 6: one tenant must not starve the others of upstream
 * connections. Slow uploads from one token held every pooled socket, and
 * another tenant's request waited for a free one far past its route's
 * timeout (35 s for a 5 s route). Now the route's `timeoutMs` covers the wait
 * for a pooled connection (504 `gateway_timeout`), and a tenant holds at most
 * `upstreamPool.maxPerTenant` of an upstream's connections: past that it is
 * refused at once with 429 `too_many_requests` and `Retry-After`.
 *
 * The uploads are real chunked requests the test keeps open; the upstream is
 * a real loopback server that counts what reached it.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../src/config/index.js';
import { expectError } from '../support/expect-error.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE, tokenFor, type IdentityFixture } from '../support/identity-fixture.js';
import { startSignedInFixture, type SignedInFixture } from '../support/signed-in-fixture.js';
import {
  startEchoUpstream,
  startSlowUpstream,
  waitFor,
  type CountingUpstream,
} from '../support/upstream.js';

/** The victim's route timeout: far shorter than the uploads that fill the pool. */
const QUICK_TIMEOUT_MS = 300;

let small: IdentityFixture;
let defaults: IdentityFixture;
/** `defaults`, with Alice's acme token and Bob's globex token from it. */
let onDefaults: SignedInFixture;
let echo: CountingUpstream;
let hanging: CountingUpstream;
/** Bearer headers for three tenants: acme (alice), globex (bob), alice's personal tenant. */
let acme: string;
let globex: string;
let personal: string;

beforeAll(async () => {
  [echo, hanging] = await Promise.all([startEchoUpstream(), startSlowUpstream()]);
  let signedIn;
  [signedIn, onDefaults] = await Promise.all([
    startSignedInFixture({
      // Two pooled connections to each upstream, one per tenant.
      upstreamPool: { maxConnections: 2, maxPerTenant: 1 },
      routes: [
        { prefix: '/uploads', upstream: echo.url, timeoutMs: 30_000 },
        { prefix: '/quick', upstream: echo.url, timeoutMs: QUICK_TIMEOUT_MS },
        { prefix: '/patient', upstream: echo.url, timeoutMs: 15_000 },
      ],
    }),
    startSignedInFixture({ routes: [{ prefix: '/hang', upstream: hanging.url }] }),
  ]);
  small = signedIn.fx;
  defaults = onDefaults.fx;
  const url = small.gw.url;
  acme = bearer(signedIn.alice.access_token);
  globex = bearer(signedIn.bob.access_token);
  const listed = await fetch(`${url}/1/users/current/tenants`, {
    headers: { authorization: basic(ALICE.email, ALICE.password) },
  });
  const { tenants } = (await listed.json()) as { tenants: { tenant_id: string; type: string }[] };
  const own = tenants.find((t) => t.type === 'usertenant');
  personal = bearer((await tokenFor(url, ALICE, own?.tenant_id ?? 'none')).access_token);
});

afterAll(async () => {
  await Promise.all([small?.close(), defaults?.close()]);
  await Promise.all([echo?.close(), hanging?.close()]);
});

/** A chunked upload that stays open, one chunk sent, until `finish`. */
interface OpenUpload {
  req: ClientRequest;
  /** Sends one more chunk: the upload keeps moving. */
  more(): void;
  /** Sends the last chunk and resolves with the gateway's answer. */
  finish(): Promise<{ status: number; body: string }>;
}

function openUpload(base: string, path: string, auth: string): OpenUpload {
  let answered: (value: { status: number; body: string }) => void = () => {};
  let failed: (err: Error) => void = () => {};
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    answered = resolve;
    failed = reject;
  });
  const req = request(
    `${base}${path}`,
    {
      method: 'POST',
      headers: { authorization: auth, 'transfer-encoding': 'chunked' },
      agent: false,
    },
    (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => answered({ status: res.statusCode ?? 0, body }));
    },
  );
  req.on('error', failed);
  req.flushHeaders();
  req.write('first chunk;');
  return {
    req,
    more: () => void req.write('another chunk;'),
    finish: () => {
      req.end('last chunk');
      return answer;
    },
  };
}

/** Resolves with the response, or with a string if none came within `ms` (the bug was a hang). */
async function within(ms: number, pending: Promise<Response>): Promise<Response | string> {
  return Promise.race([pending, delay(ms).then(() => `no answer within ${ms} ms`)]);
}

describe('the route timeout covers waiting for a pooled connection', () => {
  it('while slow uploads hold every connection, another tenant gets 504 within its timeout, and the uploads go on', async () => {
    const before = echo.counts.received;
    const uploads = [
      openUpload(small.gw.url, '/uploads/a', acme),
      openUpload(small.gw.url, '/uploads/b', globex),
    ];
    await waitFor(() => echo.counts.received === before + 2, 5000);

    const started = Date.now();
    const res = await within(
      5000,
      fetch(`${small.gw.url}/quick/report`, {
        headers: { authorization: personal, 'x-request-id': 'starved-1' },
      }),
    );
    expect(res).toBeInstanceOf(Response);
    await expectError(res as Response, 504, 'gateway_timeout');
    expect((res as Response).headers.get('x-request-id')).toBe('starved-1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(QUICK_TIMEOUT_MS - 50);
    // It never reached the upstream: it timed out waiting for a connection.
    expect(echo.counts.received).toBe(before + 2);

    // The uploads, still moving, were not cut and finish normally.
    for (const upload of uploads) upload.more();
    const answers = await Promise.all(uploads.map((u) => u.finish()));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(echo.counts.received).toBe(before + 2);
  });

  it('a request waiting for a connection is sent as soon as one frees, within its timeout', async () => {
    const before = echo.counts.received;
    const uploads = [
      openUpload(small.gw.url, '/uploads/c', acme),
      openUpload(small.gw.url, '/uploads/d', globex),
    ];
    await waitFor(() => echo.requests.filter((r) => /\/[cd]$/.test(r.url)).length === 2, 5000);
    const waiting = fetch(`${small.gw.url}/patient/next`, { headers: { authorization: personal } });
    await delay(100);
    expect(echo.requests.some((r) => r.url === '/patient/next')).toBe(false);
    expect((await uploads[0]?.finish())?.status).toBe(200);
    const res = await within(5000, waiting);
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(200);
    expect(((await (res as Response).json()) as { url: string }).url).toBe('/patient/next');
    expect((await uploads[1]?.finish())?.status).toBe(200);
    expect(echo.counts.received).toBe(before + 3);
  });
});

describe('one tenant cannot take every connection to an upstream', () => {
  it('past maxPerTenant a tenant is refused at once with 429 and Retry-After; other tenants are served', async () => {
    const upload = openUpload(small.gw.url, '/uploads/e', acme);
    await waitFor(() => echo.requests.some((r) => r.url === '/uploads/e'), 5000);
    const before = echo.counts.received;

    const refused = await within(
      5000,
      fetch(`${small.gw.url}/quick/more`, { headers: { authorization: acme } }),
    );
    expect(refused).toBeInstanceOf(Response);
    await expectError(refused as Response, 429, 'too_many_requests');
    expect((refused as Response).headers.get('retry-after')).toBe('1');
    expect(echo.counts.received).toBe(before);

    const other = await fetch(`${small.gw.url}/quick/other`, {
      headers: { authorization: globex },
    });
    expect(other.status).toBe(200);

    // Its connection given back, the tenant is served again.
    expect((await upload.finish()).status).toBe(200);
    const again = await fetch(`${small.gw.url}/quick/again`, { headers: { authorization: acme } });
    expect(again.status).toBe(200);
  });

  it('a client that leaves while waiting gives its place up', async () => {
    const uploads = [
      openUpload(small.gw.url, '/uploads/f', acme),
      openUpload(small.gw.url, '/uploads/g', globex),
    ];
    await waitFor(() => echo.requests.filter((r) => /\/[fg]$/.test(r.url)).length === 2, 5000);
    const leaving = new AbortController();
    const left = fetch(`${small.gw.url}/patient/left`, {
      headers: { authorization: personal },
      signal: leaving.signal,
    }).catch((err: unknown) => err);
    await delay(100);
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    await Promise.all(uploads.map((u) => u.finish()));
    // Its tenant's share is free again, and the request that left never reached the upstream.
    const res = await fetch(`${small.gw.url}/patient/after`, {
      headers: { authorization: personal },
    });
    expect(res.status).toBe(200);
    expect(echo.requests.some((r) => r.url === '/patient/left')).toBe(false);
  });

  it('by default a tenant holds at most a quarter of the pool (128 of 512 connections)', async () => {
    const url = defaults.gw.url;
    const { alice, bob } = onDefaults;
    const [tenantA, tenantB] = [bearer(alice.access_token), bearer(bob.access_token)];
    const held = Array.from({ length: 128 }, (_, i) => {
      const req = request(`${url}/hang/${i}`, {
        headers: { authorization: tenantA },
        agent: false,
      });
      req.on('error', () => {});
      req.end();
      return req;
    });
    try {
      await waitFor(() => hanging.counts.received === 128, 10_000);
      const refused = await within(
        5000,
        fetch(`${url}/hang/one-more`, { headers: { authorization: tenantA } }),
      );
      expect(refused).toBeInstanceOf(Response);
      await expectError(refused as Response, 429, 'too_many_requests');
      expect(hanging.counts.received).toBe(128);
      // Another tenant still reaches the upstream.
      const other = request(`${url}/hang/other`, { headers: { authorization: tenantB } });
      other.on('error', () => {});
      other.end();
      await waitFor(() => hanging.counts.received === 129, 5000);
      other.destroy();
    } finally {
      for (const req of held) req.destroy();
    }
    await waitFor(() => hanging.counts.open === 0, 5000);
  });
});

describe('upstreamPool config', () => {
  const check = (upstreamPool: unknown): string[] => {
    try {
      validateConfig({ upstreamPool }, process.cwd(), 'test');
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('names the key path of a bad value', () => {
    expect(check({ maxConnections: 4, maxPerTenant: 8 })).toEqual([
      expect.stringMatching(/^upstreamPool\.maxPerTenant: .*maxConnections/),
    ]);
    expect(check({ maxConnections: 0 })).toEqual([
      expect.stringMatching(/^upstreamPool\.maxConnections: /),
    ]);
  });

  it('names the nearest known key of a misspelt one', () => {
    expect(check({ maxConections: 4 })).toEqual([
      expect.stringMatching(/^upstreamPool\.maxConections: .*maxConnections/),
    ]);
  });
});
