/**
 * Issue 31: one admission pipeline. A check decided in
 * `src/proxy/decide/pipeline.ts` reaches the three entry ways alike — a
 * proxied request, a WebSocket upgrade and forward-auth's `/auth/verify` —
 * with the same status, the same error code in the body, the same reason on
 * the access line and the same reason in `tenant_gateway_requests_total`
 * (an upgrade is recorded by the request recorder like any request) —
 * whether the credential is a user's token or a machine client's API key
 * (issue 32).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { entryWays } from '../support/entry-ways.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, bearer } from '../support/gateway.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/personal', upstream: echo.url, tenantTypes: ['usertenant'] },
    ],
    apiKeys: { enabled: true },
  }),
  { logged: true, token: true },
);
let apiKey: string;
/** The credential the ways send: set by each `describe` below. */
let credential: Record<string, string> = {};

beforeAll(async () => {
  const { clientId } = await makeClient(s.gw.gateway.store, 'acme', []);
  ({ apiKey } = await makeApiKey(s.gw.gateway.store, clientId));
});

const ways = entryWays(s);
const WAYS = [
  ['a proxied request', ways.proxied],
  ['a WebSocket upgrade', ways.upgrade],
  ['forward-auth', ways.forwardAuth],
] as const;

interface Refusal {
  check: string;
  prefix: string;
  path: string;
  headers: Record<string, string>;
  status: number;
  code: string;
}

const REFUSALS: Refusal[] = [
  {
    check: "the route's tenant rules (tenant_mismatch)",
    prefix: '/orders',
    path: '/orders/ws',
    headers: { 'X-Tenant-Id': 'globex' },
    status: 403,
    code: 'tenant_mismatch',
  },
  {
    check: "the route's tenant types (forbidden)",
    prefix: '/personal',
    path: '/personal/ws',
    headers: {},
    status: 403,
    code: 'forbidden',
  },
];

const CREDENTIALS: [string, () => Record<string, string>, string][] = [
  ["a user's token", () => ({ authorization: bearer(s.token) }), 'user'],
  ["a client's API key", () => ({ 'x-api-key': apiKey }), 'api_key'],
];

describe.each(CREDENTIALS)('with %s', (_credential, credentialOf, kindOf) => {
  beforeAll(() => {
    credential = credentialOf();
  });

  describe.each(REFUSALS)('$check', ({ prefix, path, headers, status, code }) => {
    it.each(WAYS)('refuses %s alike: status, code, log reason, metric', async (_name, way) => {
      const counted = async (route: string) =>
        total(await scrape(adminUrlOf(s.gw)), 'tenant_gateway_requests_total', {
          route,
          reason: code,
          // The credential proved who it is before the check refused (issue 32: counted by kind).
          principal: kindOf,
        });
      const route = way === ways.forwardAuth ? 'forward-auth' : prefix;
      const before = await counted(route);
      const received = s.up.echo.counts.received;

      const answer = await way(path, { ...credential, ...headers });

      expect(answer.status).toBe(status);
      expect(answer.code).toBe(code);
      expect(answer.line).toMatchObject({
        status,
        outcome: 'refused',
        reason: code,
        route,
        tenantId: 'acme',
      });
      expect(await counted(route)).toBe(before + 1);
      expect(s.up.echo.counts.received).toBe(received);
    });
  });
});
