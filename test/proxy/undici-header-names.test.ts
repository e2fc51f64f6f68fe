/**
 * The names the gateway sets on every forwarded request are made known to
 * undici once (`undici-header-names.ts`, issue 35): what undici sends and what
 * it refuses stay as they were — a known name is still sent, a bad value
 * under it still refused — and only lower-case tokens are added. The header
 * policy's `setNames` is checked against what its `rewrite` really sets, so
 * the list cannot fall behind a header added later.
 */
import { createServer, IncomingMessage, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/credentials/authenticate.js';
import { identityHeaders } from '../../src/config/schema/headers.js';
import { createHeaderPolicy } from '../../src/proxy/decide/header-policy.js';
import { createTrustCheck } from '../../src/proxy/decide/trusted-proxies.js';
import { knowHeaderNames, undiciNameTable } from '../../src/proxy/forward/undici-header-names.js';

/** The gateway's default identity header names. */
const NAMES = identityHeaders.parse({});

const USER: Principal = {
  kind: 'user',
  userId: 'u1',
  email: 'a@example.test',
  tenantId: 'acme',
  tenantType: 'orgtenant',
  scopes: ['orders:read'],
  claims: {},
} as unknown as Principal;

let server: Server;
let pool: Pool;
let heard: IncomingHttpHeaders | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    heard = req.headers;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await pool.close();
  await new Promise((resolve) => server.close(resolve));
});

async function send(headers: Record<string, string>): Promise<number> {
  const answer = await pool.request({ path: '/', method: 'GET', headers });
  await answer.body.text();
  return answer.statusCode;
}

describe('header names made known to undici', () => {
  it('finds the table in the undici this build runs on', () => {
    // Fails when an undici upgrade moves it: the saving is then gone, say so.
    expect(undiciNameTable()?.['content-type']).toBe('content-type');
  });

  it('adds lower-case tokens only, each mapped to itself, once', () => {
    const table = undiciNameTable()!;
    const added = knowHeaderNames([
      'x-known-by-test',
      'X-Upper-Case',
      'x bad name',
      'x-é',
      '',
      'x-known-by-test',
    ]);
    expect(added).toBe(1);
    expect(table['x-known-by-test']).toBe('x-known-by-test');
    expect(table['X-Upper-Case']).toBeUndefined();
    expect(table['x-upper-case']).toBeUndefined();
    expect(table['x bad name']).toBeUndefined();
    expect(knowHeaderNames(['content-type', 'x-known-by-test'])).toBe(0);
  });

  it('still sends a known name, and still refuses a bad value under it', async () => {
    knowHeaderNames(['x-tenant-id']);
    expect(await send({ 'x-tenant-id': 'acme' })).toBe(200);
    expect(heard?.['x-tenant-id']).toBe('acme');
    await expect(send({ 'x-tenant-id': 'acme\r\nx-user-id: root' })).rejects.toThrow(
      /invalid x-tenant-id header/,
    );
    await expect(send({ 'x-tenant-id': 'a\u0000b' })).rejects.toThrow(/invalid x-tenant-id header/);
  });

  it('leaves a name it was not given to undici’s own check', async () => {
    await expect(send({ 'x-not (a token)': 'v' })).rejects.toThrow(/invalid header key/);
  });

  it('names every header the policy sets on a forwarded request', () => {
    const policy = createHeaderPolicy(
      NAMES,
      createTrustCheck([]),
      { add: [], keep: [] },
      undefined,
    );
    const req = new IncomingMessage({ remoteAddress: '10.0.0.9' } as Socket);
    req.headers = { host: 'api.example.test', accept: '*/*' };
    policy.rewrite(req, USER, { requestId: 'r1', stripAuthorization: true, upgrade: false });
    const set = Object.keys(req.headers).filter((name) => name !== 'host' && name !== 'accept');
    expect(set.every((name) => policy.setNames.includes(name))).toBe(true);
    expect(set.length).toBeGreaterThanOrEqual(8);
  });
});
