/**
 * `listen.tls` with `listen.http2`: h2 and HTTP/1.1 over TLS on one port,
 * chosen by ALPN; the certificate re-read at a reload (what SIGHUP runs),
 * and a pair that cannot be used at a reload leaving the old one serving.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { http2Request, http2Session } from '../support/http2-client.js';
import { makeCa, makeSignedCertificate } from '../support/test-certificates.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';
import { X509Certificate } from 'node:crypto';

const SAN = 'subjectAltName=DNS:localhost,IP:127.0.0.1';
let dir: string;
let ca: Buffer;
let upstream: CountingUpstream;
let gw: TestGateway;
let raw: Record<string, unknown>;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tg-h2-tls-'));
  makeCa(dir, 'ca');
  makeSignedCertificate(dir, 'first', '/CN=localhost', SAN);
  makeSignedCertificate(dir, 'second', '/CN=localhost', SAN);
  copyFileSync(join(dir, 'first.pem'), join(dir, 'tls.crt'));
  copyFileSync(join(dir, 'first.key'), join(dir, 'tls.key'));
  ca = readFileSync(join(dir, 'ca.pem'));
  upstream = await startEchoUpstream();
  raw = {
    listen: { http2: true, tls: { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') } },
    routes: [{ prefix: '/open', upstream: upstream.url, auth: 'none' }],
  };
  gw = await startTestGateway(raw);
  port = Number(new URL(gw.url).port);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The serial number of the certificate a new TLS handshake presents, and the protocol ALPN chose. */
function handshake(alpn: string[]): Promise<{ serial: string; protocol: string | false }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { port, host: '127.0.0.1', ca, servername: 'localhost', ALPNProtocols: alpn },
      () => {
        resolve({
          serial: socket.getPeerCertificate().serialNumber,
          protocol: socket.alpnProtocol ?? false,
        });
        socket.end();
      },
    );
    socket.on('error', reject);
  });
}

function serialOf(name: string): string {
  return new X509Certificate(readFileSync(join(dir, `${name}.pem`))).serialNumber;
}

/** What the same config with the files' current content does at a reload. */
function reloadSame() {
  return gw.gateway.reload(
    validateConfig(
      {
        ...raw,
        listen: { ...(raw.listen as object), host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
      },
      process.cwd(),
      'test',
    ),
  );
}

describe('TLS on the main listener', () => {
  it('speaks h2 to a client offering h2 and forwards its request with X-Forwarded-Proto https', async () => {
    const session = await http2Session(`https://localhost:${port}`, ca);
    try {
      expect(session.alpnProtocol).toBe('h2');
      const answer = await http2Request(session, '/open/tls');
      expect(answer.status).toBe(200);
      const echoed = JSON.parse(answer.body) as { headers: Record<string, string> };
      expect(echoed.headers['x-forwarded-proto']).toBe('https');
      expect(echoed.headers.host).toBe(`localhost:${port}`);
    } finally {
      session.close();
    }
  });

  it('speaks HTTP/1.1 to a client offering only http/1.1, or no ALPN at all', async () => {
    expect((await handshake(['http/1.1'])).protocol).toBe('http/1.1');
    expect((await handshake(['h2', 'http/1.1'])).protocol).toBe('h2');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        { port, host: '127.0.0.1', ca, servername: 'localhost', path: '/open/one' },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).headers['x-forwarded-proto']).toBe('https');
  });

  it('serves a renewed certificate after a reload, and keeps it when the next files cannot be used', async () => {
    expect((await handshake(['h2'])).serial).toBe(serialOf('first'));
    copyFileSync(join(dir, 'second.pem'), join(dir, 'tls.crt'));
    copyFileSync(join(dir, 'second.key'), join(dir, 'tls.key'));
    await reloadSame();
    expect((await handshake(['h2'])).serial).toBe(serialOf('second'));
    // A key that does not go with the certificate, then a file that is no PEM.
    copyFileSync(join(dir, 'first.key'), join(dir, 'tls.key'));
    await reloadSame();
    expect((await handshake(['h2'])).serial).toBe(serialOf('second'));
    writeFileSync(join(dir, 'tls.crt'), 'not a certificate');
    await reloadSame();
    expect((await handshake(['http/1.1'])).serial).toBe(serialOf('second'));
  });
});
