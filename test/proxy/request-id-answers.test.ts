/**
 * Every answer carries its request's X-Request-Id — the upstream's, the
 * identity API's, a refusal, a CORS route's, the admin listener's — now that
 * the id is set as the head is written (`src/http/response-request-id.ts`) and,
 * on a proxied answer, put into the upstream's head instead of going
 * through `setHeader`. Through a real gateway on real sockets.
 */
import {
  createServer,
  request,
  ServerResponse,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentifiedResponse, identifyResponse } from '../../src/http/response-request-id.js';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let upstream: Server;
let fx: IdentityFixture;
let token: string;
const heard: string[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    heard.push(String(req.headers['x-request-id']));
    if (req.url?.startsWith('/own')) res.setHeader('x-request-id', 'the-upstreams-own');
    if (req.url?.startsWith('/reason')) res.writeHead(202, 'Taken Up', { 'x-kind': 'reason' });
    res.end('ok');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  fx = await startMemoryIdentityFixture({
    admin: {},
    routes: [
      { prefix: '/api', upstream: upstreamUrl, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/own', upstream: upstreamUrl, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/reason', upstream: upstreamUrl, tenant: { header: 'X-Tenant-Id' } },
      {
        prefix: '/cors',
        upstream: upstreamUrl,
        tenant: { header: 'X-Tenant-Id' },
        cors: { origins: ['https://app.example.com'] },
      },
    ],
  });
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
});
afterAll(async () => {
  await fx.close();
  await new Promise((r) => upstream.close(r));
});

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; message: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          message: res.statusMessage ?? '',
          headers: res.headers,
        }),
      );
    })
      .on('error', reject)
      .end();
  });
}

const ID = /^[0-9a-f-]{36}$/;
const asAlice = () => ({ authorization: bearer(token), 'x-tenant-id': 'acme' });

describe('X-Request-Id on every answer', () => {
  it('a proxied answer: the id the upstream heard, once', async () => {
    const res = await get(`${fx.gw.url}/api/x`, asAlice());
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(ID);
    expect(heard.at(-1)).toBe(res.headers['x-request-id']);
  });

  it('a proxied answer with the upstream’s reason phrase keeps both', async () => {
    const res = await get(`${fx.gw.url}/reason/x`, asAlice());
    expect([res.status, res.message, res.headers['x-kind']]).toEqual([202, 'Taken Up', 'reason']);
    expect(res.headers['x-request-id']).toBe(heard.at(-1));
  });

  it('an upstream that answers with its own X-Request-Id keeps it (as it always has)', async () => {
    const res = await get(`${fx.gw.url}/own/x`, asAlice());
    expect(res.headers['x-request-id']).toBe('the-upstreams-own');
  });

  it('a CORS route’s answer, the identity API’s, a refusal and a 404', async () => {
    const cors = await get(`${fx.gw.url}/cors/x`, {
      ...asAlice(),
      origin: 'https://app.example.com',
    });
    expect(cors.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(cors.headers['x-request-id']).toBe(heard.at(-1));
    const metadata = await get(`${fx.gw.url}/.well-known/oauth-authorization-server`);
    const refused = await get(`${fx.gw.url}/api/x`);
    const missing = await get(`${fx.gw.url}/nowhere`, { 'x-request-id': 'mine-1' });
    expect([metadata.status, refused.status, missing.status]).toEqual([200, 401, 404]);
    expect(metadata.headers['x-request-id']).toMatch(ID);
    expect(refused.headers['x-request-id']).toMatch(ID);
    expect(missing.headers['x-request-id']).toBe('mine-1');
  });

  it('the admin listener’s answers', async () => {
    const res = await get(`${fx.gw.adminUrl as string}/healthz`, { 'x-request-id': 'probe-7' });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('probe-7');
  });
});

describe('IdentifiedResponse', () => {
  async function answer(respond: (res: ServerResponse) => void): Promise<IncomingHttpHeaders> {
    const server = createServer({ ServerResponse: IdentifiedResponse }, (_req, res) => {
      identifyResponse(res, 'id-42');
      respond(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      return (await get(`http://127.0.0.1:${port}/`)).headers;
    } finally {
      await new Promise((r) => server.close(r));
    }
  }

  it('sets the id on an implicit head, an explicit one, and leaves one set by hand', async () => {
    expect((await answer((res) => res.end('x')))['x-request-id']).toBe('id-42');
    expect((await answer((res) => res.writeHead(204).end()))['x-request-id']).toBe('id-42');
    const byHand = await answer((res) => {
      res.setHeader('x-request-id', 'by-hand');
      res.end();
    });
    expect(byHand['x-request-id']).toBe('by-hand');
  });

  it('a response of another kind gets the header at once', () => {
    const res = new ServerResponse({ method: 'GET', httpVersionMajor: 1 } as never);
    identifyResponse(res, 'now');
    expect(res.getHeader('x-request-id')).toBe('now');
  });
});
