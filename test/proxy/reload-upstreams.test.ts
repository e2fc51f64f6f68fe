/**
 * Issue 13: a config reload that removes a route closes the kept-alive
 * connections to its upstream once their requests have ended, instead of
 * leaving the old origin's pool open for as long as the upstream allows.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { waitFor } from '../support/upstream.js';

/** An upstream that keeps connections alive for a minute and tells which are open. */
interface TrackedUpstream {
  url: string;
  open: Set<Socket>;
  /** Holds the next request: `arrived` once it is there, answered on `release()`. */
  holdNext(): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function startTrackedUpstream(): Promise<TrackedUpstream> {
  const open = new Set<Socket>();
  let held: ((release: () => void) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const answer = (): void => {
      res.writeHead(200, { 'content-type': 'text/plain', 'keep-alive': 'timeout=60' });
      res.end(`${req.url}`);
    };
    const hold = held;
    held = undefined;
    if (hold === undefined) answer();
    else hold(answer);
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open,
    holdNext() {
      let release: (() => void) | undefined;
      const arrived = new Promise<void>((resolve) => {
        held = (answer) => {
          release = answer;
          resolve();
        };
      });
      return {
        arrived,
        release() {
          if (release === undefined) throw new Error('the held request has not arrived');
          release();
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let fx: IdentityFixture;
let orders: TrackedUpstream;
let invoices: TrackedUpstream;
let token: string;

beforeAll(async () => {
  [orders, invoices] = await Promise.all([startTrackedUpstream(), startTrackedUpstream()]);
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/orders', upstream: orders.url },
      { prefix: '/invoices', upstream: invoices.url },
    ],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
});
afterAll(async () => {
  await fx?.close();
  await orders?.close();
  await invoices?.close();
});

const get = (path: string) =>
  fetch(`${fx.gw.url}${path}`, { headers: { authorization: bearer(token) } });

describe('a reload that removes a route', () => {
  it('lets the request in flight finish, then closes the connections to the removed upstream only', async () => {
    expect((await get('/orders/1')).status).toBe(200);
    expect((await get('/invoices/1')).status).toBe(200);
    expect(orders.open.size).toBe(1);
    expect(invoices.open.size).toBe(1);

    const held = orders.holdNext();
    const inFlight = get('/orders/slow');
    await held.arrived;

    const next = validateConfig(
      {
        ...fx.config,
        listen: { host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
        routes: [{ prefix: '/invoices', upstream: invoices.url }],
      },
      process.cwd(),
      'test',
    );
    await fx.gw.gateway.reload(next);

    // Still open: its request has not been answered yet.
    expect(orders.open.size).toBe(1);
    held.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('/orders/slow');

    await waitFor(() => orders.open.size === 0, 10_000);
    expect(invoices.open.size).toBe(1);
    expect((await get('/orders/1')).status).toBe(404);
    expect((await get('/invoices/2')).status).toBe(200);
    expect(invoices.open.size).toBe(1);
  });
});
