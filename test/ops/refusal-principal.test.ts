/**
 * Issue 30, item 6: a refusal after the token verified says whom it refused.
 * `tenant_mismatch`, `forbidden` (a route's tenant types) and a route's 429
 * are logged with the principal's `userId` and `tenantId`, and a mismatch with
 * the tenant the request named (`requestedTenant`) — on the proxy, on a
 * WebSocket upgrade (its `upgrade refused` line) and on forward-auth; the
 * api's `tenant_mismatch` and `tenant_access_denied` name the tenant too.
 */
import { describe, expect, it } from 'vitest';
import { entryWays } from '../support/entry-ways.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE } from '../support/identity-fixture.js';
import { lineOf } from '../support/log-lines.js';
import type { Line } from '../support/log-sink.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/personal', upstream: echo.url, tenantTypes: ['usertenant'] },
      {
        prefix: '/limited',
        upstream: echo.url,
        rateLimit: { perUser: { requestsPerSecond: 0.1, burst: 1 } },
      },
    ],
  }),
  { logged: true, token: true },
);
const ways = entryWays(s);

/** A request the way each entry way takes it, as Alice: status and the line that logged it. */
type Way = (path: string, headers: Record<string, string>) => Promise<[number, Line]>;
const asAlice =
  (way: (typeof ways)['proxied']): Way =>
  async (path, headers) => {
    const { status, line } = await way(path, { authorization: bearer(s.token), ...headers });
    return [status, line];
  };
const proxy = asAlice(ways.proxied);
const upgrade = asAlice(ways.upgrade);
const forwardAuth = asAlice(ways.forwardAuth);

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
      userId: s.grant['user_id'],
      tenantId: 'acme',
      requestedTenant: 'globex',
    });
  });

  it("forbidden by the route's tenant types names the principal", async () => {
    const [status, line] = await way('/personal/x', {});
    expect(status).toBe(403);
    expect(line).toMatchObject({
      reason: 'forbidden',
      userId: s.grant['user_id'],
      tenantId: 'acme',
    });
    expect(line).not.toHaveProperty('requestedTenant');
  });

  it('the tenant named is logged as sent, cut at 64 characters', async () => {
    const long = `x${'y'.repeat(100)}`;
    const [status, line] = await way('/orders/x', { 'X-Tenant-Id': long });
    expect(status).toBe(403);
    expect(line).toMatchObject({ userId: s.grant['user_id'], requestedTenant: long.slice(0, 64) });
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
      userId: s.grant['user_id'],
      tenantId: 'acme',
    });
  });
});

describe('the api', () => {
  it('tenant_mismatch on /1/tenants/{id} names the tenant the path named', async () => {
    const res = await fetch(`${s.gw.url}/1/tenants/globex`, {
      headers: { authorization: bearer(s.token) },
    });
    expect(res.status).toBe(403);
    expect(await lineOf(s.lines, res.headers.get('x-request-id'))).toMatchObject({
      reason: 'tenant_mismatch',
      userId: s.grant['user_id'],
      tenantId: 'acme',
      requestedTenant: 'globex',
    });
  });

  it('tenant_access_denied on a token request names the user and the tenant asked for', async () => {
    const res = await fetch(`${s.gw.url}/1/token?tenant_id=globex`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect(res.status).toBe(403);
    expect(await lineOf(s.lines, res.headers.get('x-request-id'))).toMatchObject({
      reason: 'tenant_access_denied',
      userId: s.grant['user_id'],
      requestedTenant: 'globex',
    });
  });
});
