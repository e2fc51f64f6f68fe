/**
 * Issue 15: https upstreams with `routes[].tls` — the route's CA, server
 * name, client certificate (mTLS) and `insecureSkipVerify`, against real
 * node:https upstreams with a CA made here with openssl.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { bearer } from '../support/gateway.js';
import { makeCa, makeSignedCertificate } from '../support/test-certificates.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let dir: string;
let fx: IdentityFixture;
let token: string;
const servers: Server[] = [];

/** CA, other CA, a server certificate for upstream.test, a client certificate (both by CA). */
function makeCertificates(into: string): void {
  for (const ca of ['ca', 'other-ca']) makeCa(into, ca);
  makeSignedCertificate(into, 'server', '/CN=server.test', 'subjectAltName=DNS:upstream.test');
  makeSignedCertificate(into, 'client', '/CN=client.test', 'extendedKeyUsage=clientAuth');
}

async function startHttps(requireClientCert: boolean): Promise<string> {
  const file = (name: string) => readFileSync(join(dir, name));
  const server = createServer(
    {
      key: file('server.key'),
      cert: file('server.pem'),
      ...(requireClientCert
        ? { ca: file('ca.pem'), requestCert: true, rejectUnauthorized: true }
        : {}),
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url, client: peer?.subject?.CN ?? null }));
    },
  );
  // WebSockets on the same server: each message is answered with the
  // message and the client certificate's name the upgrade came with.
  new WebSocketServer({ server }).on('connection', (socket, req) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    socket.on('message', (data) => socket.send(`${String(data)} ${peer?.subject?.CN ?? '-'}`));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tg-upstream-tls-'));
  makeCertificates(dir);
  const [plain, mutual] = [await startHttps(false), await startHttps(true)];
  const at = (name: string) => join(dir, name);
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/ok', upstream: plain, tls: { ca: at('ca.pem'), serverName: 'upstream.test' } },
      {
        prefix: '/wrong-ca',
        upstream: plain,
        tls: { ca: at('other-ca.pem'), serverName: 'upstream.test' },
      },
      {
        prefix: '/wrong-name',
        upstream: plain,
        tls: { ca: at('ca.pem'), serverName: 'other.test' },
      },
      { prefix: '/system-cas', upstream: plain },
      { prefix: '/insecure', upstream: plain, tls: { insecureSkipVerify: true } },
      {
        prefix: '/mtls',
        upstream: mutual,
        tls: {
          ca: at('ca.pem'),
          serverName: 'upstream.test',
          cert: at('client.pem'),
          key: at('client.key'),
        },
      },
      {
        prefix: '/no-client-cert',
        upstream: mutual,
        tls: { ca: at('ca.pem'), serverName: 'upstream.test' },
      },
    ],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
}, 30_000);

afterAll(async () => {
  await fx?.close();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function get(path: string) {
  const res = await fetch(`${fx.gw.url}${path}`, { headers: { authorization: bearer(token) } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('https upstreams with routes[].tls', () => {
  it('verifies the upstream against the route CA and server name', async () => {
    expect(await get('/ok/x')).toEqual({ status: 200, body: { url: '/ok/x', client: null } });
  });

  it.each(['/wrong-ca/x', '/wrong-name/x', '/system-cas/x', '/no-client-cert/x'])(
    '%s: the upstream cannot be verified or refuses us: 502 bad_gateway',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(502);
      expect(res.body.error).toBe('bad_gateway');
    },
  );

  it('insecureSkipVerify takes any certificate', async () => {
    expect((await get('/insecure/x')).status).toBe(200);
  });

  it('presents the client certificate to an upstream that requires one (mTLS)', async () => {
    expect(await get('/mtls/x')).toEqual({
      status: 200,
      body: { url: '/mtls/x', client: 'client.test' },
    });
  });
});

describe('WebSockets to https upstreams', () => {
  /** The first message back, or the status of a refused upgrade. */
  const echo = (path: string) =>
    new Promise<string | number>((resolve, reject) => {
      const socket = new WebSocket(`${fx.gw.url.replace('http', 'ws')}${path}`, {
        headers: { authorization: bearer(token) },
      });
      socket.on('open', () => socket.send('hello'));
      socket.on('message', (data) => {
        resolve(String(data));
        socket.close();
      });
      socket.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.on('error', reject);
    });

  it('go through the route TLS settings, client certificate included', async () => {
    expect(await echo('/ok/ws')).toBe('hello -');
    expect(await echo('/mtls/ws')).toBe('hello client.test');
  });

  it.each(['/wrong-ca/ws', '/wrong-name/ws', '/no-client-cert/ws'])(
    '%s: refused with 502, like a plain request',
    async (path) => {
      expect(await echo(path)).toBe(502);
    },
  );
});
