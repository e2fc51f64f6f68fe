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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUrlOf, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { lineSink, type Line } from '../support/log-sink.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import { scrape, total } from '../support/prometheus-text.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream, waitFor, type CountingUpstream } from '../support/upstream.js';

let fx: IdentityFixture;
let gw: TestGateway;
let echo: CountingUpstream;
let sink: ReturnType<typeof lineSink>;
let token: string;
let apiKey: string;
/** The credential the ways send: set by each `describe` below. */
let credential: Record<string, string> = {};

beforeAll(async () => {
  echo = await startEchoUpstream();
  fx = await startMemoryIdentityFixture({
    routes: [
      { prefix: '/orders', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/personal', upstream: echo.url, tenantTypes: ['usertenant'] },
    ],
    apiKeys: { enabled: true },
  });
  sink = lineSink();
  gw = await startTestGateway({ ...fx.config, admin: {} }, { logTo: sink.stream });
  token = (await tokenFor(gw.url, ALICE, 'acme')).access_token;
  const { clientId } = await makeClient(gw.gateway.store, 'acme', []);
  ({ apiKey } = await makeApiKey(gw.gateway.store, clientId));
});

afterAll(async () => {
  await gw?.close();
  await fx?.close();
  await echo?.close();
});

interface Answer {
  status: number;
  code: unknown;
  line: Line;
  /** The route label the request is counted under. */
  route: string;
}

async function lineOf(requestId: string | null, msg: string): Promise<Line> {
  let line: Line | undefined;
  await waitFor(() => {
    line = sink.lines.find((l) => l.msg === msg && l.requestId === requestId);
    return line !== undefined;
  }, 2000);
  return line as Line;
}

type Way = (prefix: string, path: string, headers: Record<string, string>) => Promise<Answer>;

const proxied: Way = async (prefix, path, headers) => {
  const res = await fetch(`${gw.url}${path}`, {
    headers: { ...credential, ...headers },
  });
  const body = (await res.json()) as { error?: unknown };
  const line = await lineOf(res.headers.get('x-request-id'), 'request');
  return { status: res.status, code: body.error, line, route: prefix };
};

const upgrade: Way = async (prefix, path, headers) => {
  const raw = await rawUpgrade(
    gw.url,
    path,
    Object.entries({ ...credential, ...headers }).map(([k, v]) => `${k}: ${v}`),
    'close',
  );
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const requestId = /^x-request-id: (.*)$/im.exec(head)?.[1] ?? null;
  const line = await lineOf(requestId, 'upgrade refused');
  return {
    status: Number(head.split(' ')[1]),
    code: (JSON.parse(body) as { error?: unknown }).error,
    line,
    route: prefix,
  };
};

const forwardAuth: Way = async (_prefix, path, headers) => {
  const res = await fetch(`${gw.url}/auth/verify`, {
    headers: { ...credential, 'x-original-uri': path, ...headers },
  });
  const body = (await res.json()) as { error?: unknown };
  const line = await lineOf(res.headers.get('x-request-id'), 'request');
  return { status: res.status, code: body.error, line, route: 'forward-auth' };
};

const WAYS: [string, Way][] = [
  ['a proxied request', proxied],
  ['a WebSocket upgrade', upgrade],
  ['forward-auth', forwardAuth],
];

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
  ["a user's token", () => ({ authorization: bearer(token) }), 'user'],
  ["a client's API key", () => ({ 'x-api-key': apiKey }), 'api_key'],
];

describe.each(CREDENTIALS)('with %s', (_credential, credentialOf, kindOf) => {
  beforeAll(() => {
    credential = credentialOf();
  });

  describe.each(REFUSALS)('$check', ({ prefix, path, headers, status, code }) => {
    it.each(WAYS)('refuses %s alike: status, code, log reason, metric', async (_name, way) => {
      const counted = async (route: string) =>
        total(await scrape(adminUrlOf(gw)), 'tenant_gateway_requests_total', {
          route,
          reason: code,
          // The credential proved who it is before the check refused (issue 32: counted by kind).
          principal: kindOf,
        });
      const route = way === forwardAuth ? 'forward-auth' : prefix;
      const before = await counted(route);
      const received = echo.counts.received;

      const answer = await way(prefix, path, headers);

      expect(answer.status).toBe(status);
      expect(answer.code).toBe(code);
      expect(answer.line).toMatchObject({
        status,
        outcome: 'refused',
        reason: code,
        route: answer.route,
        tenantId: 'acme',
      });
      expect(await counted(answer.route)).toBe(before + 1);
      expect(echo.counts.received).toBe(received);
    });
  });
});
