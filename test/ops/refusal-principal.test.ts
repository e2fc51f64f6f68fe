/**
 * Issue 30, item 6: a refusal after the token verified says whom it refused.
 * `tenant_mismatch`, `forbidden` (a route's tenant types) and a route's 429
 * are logged with the principal's `userId` and `tenantId`, and a mismatch with
 * the tenant the request named (`requestedTenant`) — on the proxy, on a
 * WebSocket upgrade (its `upgrade refused` line) and on forward-auth; the
 * api's `tenant_mismatch` and `tenant_access_denied` name the tenant too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { lineSink, type Line } from '../support/log-sink.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream, waitFor, type CountingUpstream } from '../support/upstream.js';

let fx: IdentityFixture;
let gw: TestGateway;
let echo: CountingUpstream;
let sink: ReturnType<typeof lineSink>;
let token: string;
let aliceId: string;

beforeAll(async () => {
  echo = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/personal', upstream: echo.url, tenantTypes: ['usertenant'] },
      {
        prefix: '/limited',
        upstream: echo.url,
        rateLimit: { perUser: { requestsPerSecond: 0.1, burst: 1 } },
      },
    ],
  });
  sink = lineSink();
  gw = await startTestGateway(fx.config, { logTo: sink.stream });
  const granted = await tokenFor(gw.url, ALICE, 'acme');
  token = granted.access_token;
  aliceId = granted['user_id'] as string;
});

afterAll(async () => {
  await gw?.close();
  await fx?.close();
  await echo?.close();
});

async function lineOf(requestId: string | null, msg: string): Promise<Line> {
  let line: Line | undefined;
  await waitFor(() => {
    line = sink.lines.find((l) => l.msg === msg && l.requestId === requestId);
    return line !== undefined;
  }, 2000);
  return line as Line;
}

/** A request the way each entry way takes it: status and the line that logged it. */
type Way = (path: string, headers: Record<string, string>) => Promise<[number, Line]>;

const proxy: Way = async (path, headers) => {
  const res = await fetch(`${gw.url}${path}`, {
    headers: { authorization: bearer(token), ...headers },
  });
  return [res.status, await lineOf(res.headers.get('x-request-id'), 'request')];
};

const upgrade: Way = async (path, headers) => {
  const raw = await rawUpgrade(
    gw.url,
    path,
    [`Authorization: ${bearer(token)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)],
    'close',
  );
  const requestId = /^x-request-id: (.*)$/im.exec(raw)?.[1] ?? null;
  return [Number(raw.split(' ')[1]), await lineOf(requestId, 'upgrade refused')];
};

const forwardAuth: Way = async (path, headers) => {
  const res = await fetch(`${gw.url}/auth/verify`, {
    headers: { authorization: bearer(token), 'x-original-uri': path, ...headers },
  });
  return [res.status, await lineOf(res.headers.get('x-request-id'), 'request')];
};

describe.each([
  ['the proxy', proxy],
  ['a WebSocket upgrade', upgrade],
  ['forward-auth', forwardAuth],
])('on %s', (_name, way) => {
  it('tenant_mismatch names the principal and the tenant the request named', async () => {
    const [status, line] = await way('/orders/x', { 'X-Tenant-Id': 'globex' });
    expect(status).toBe(403);
    expect(line).toMatchObject({
      reason: 'tenant_mismatch',
      userId: aliceId,
      tenantId: 'acme',
      requestedTenant: 'globex',
    });
  });

  it("forbidden by the route's tenant types names the principal", async () => {
    const [status, line] = await way('/personal/x', {});
    expect(status).toBe(403);
    expect(line).toMatchObject({ reason: 'forbidden', userId: aliceId, tenantId: 'acme' });
    expect(line).not.toHaveProperty('requestedTenant');
  });

  it('the tenant named is logged as sent, cut at 64 characters', async () => {
    const long = `x${'y'.repeat(100)}`;
    const [status, line] = await way('/orders/x', { 'X-Tenant-Id': long });
    expect(status).toBe(403);
    expect(line).toMatchObject({ userId: aliceId, requestedTenant: long.slice(0, 64) });
  });
});

describe.each([
  ['the proxy', proxy],
  ['a WebSocket upgrade', upgrade],
])("a route's rate limit on %s", (_name, way) => {
  it('429 names the principal', async () => {
    const statuses: number[] = [];
    let refused: Line | undefined;
    for (let i = 0; i < 3 && refused === undefined; i++) {
      const [status, line] = await way('/limited/x', {});
      statuses.push(status);
      if (status === 429) refused = line;
    }
    expect(statuses).toContain(429);
    expect(refused).toMatchObject({
      reason: 'too_many_requests',
      userId: aliceId,
      tenantId: 'acme',
    });
  });
});

describe('the api', () => {
  it('tenant_mismatch on /1/tenants/{id} names the tenant the path named', async () => {
    const res = await fetch(`${gw.url}/1/tenants/globex`, {
      headers: { authorization: bearer(token) },
    });
    expect(res.status).toBe(403);
    expect(await lineOf(res.headers.get('x-request-id'), 'request')).toMatchObject({
      reason: 'tenant_mismatch',
      userId: aliceId,
      tenantId: 'acme',
      requestedTenant: 'globex',
    });
  });

  it('tenant_access_denied on a token request names the user and the tenant asked for', async () => {
    const res = await fetch(`${gw.url}/1/token?tenant_id=globex`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect(res.status).toBe(403);
    expect(await lineOf(res.headers.get('x-request-id'), 'request')).toMatchObject({
      reason: 'tenant_access_denied',
      userId: aliceId,
      requestedTenant: 'globex',
    });
  });
});
