/**
 * Issue 47: Envoy's gRPC ext_authz (`envoy.service.auth.v3.Authorization/Check`)
 * with `forwardAuth.grpc`. No Envoy binary exists here: a grpc-js client,
 * built from the same vendored Envoy protos, sends the CheckRequest Envoy
 * sends (`attributes.request.http`: method, path, host, lower-case headers,
 * scheme). Each verdict is compared with `/auth/verify`'s answer to the same
 * request in Envoy's HTTP mode (the original path appended, the original Host).
 * Each check is counted and logged as `/auth/verify`'s requests are, under
 * the route `ext-authz`.
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf } from '../support/gateway.js';
import { scrape, total, type Sample } from '../support/prometheus-text.js';

const s = fixtureSuite(
  {},
  () => ({
    forwardAuth: { host: '127.0.0.1', port: 0, grpc: true, grpcPort: 0 },
    routes: [{ prefix: '/orders', tenant: { header: 'X-Tenant-Id' } }],
  }),
  // Logged: the checks' access-log lines are read.
  { token: true, logged: true },
);

interface HeaderOption {
  header: { key: string; value: string };
}
interface CheckResponse {
  status: { code: number; message: string };
  ok_response?: { headers: HeaderOption[]; headers_to_remove: string[] };
  denied_response?: { status: { code: string | number }; headers: HeaderOption[]; body: string };
  http_response?: string;
}

type Authorization = grpc.Client & {
  Check(
    request: unknown,
    callback: (err: grpc.ServiceError | null, answer: CheckResponse) => void,
  ): void;
};

let client: Authorization;

beforeAll(() => {
  const definition = loader.loadSync('envoy/service/auth/v3/external_auth.proto', {
    includeDirs: [fileURLToPath(new URL('../../proto/', import.meta.url))],
    keepCase: true,
    longs: Number,
    enums: Number,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    envoy: { service: { auth: { v3: { Authorization: grpc.ServiceClientConstructor } } } };
  };
  const port = s.gw.bound.extAuthz?.port;
  client = new pkg.envoy.service.auth.v3.Authorization(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as Authorization;
});
afterAll(() => client?.close());

/** What Envoy sends for a request (its headers map is lower-case and holds the pseudo-headers). */
function envoyCheck(method: string, path: string, headers: Record<string, string>) {
  return {
    attributes: {
      source: { address: { socket_address: { address: '127.0.0.1', port_value: 40000 } } },
      request: {
        time: { seconds: Math.floor(Date.now() / 1000) },
        http: {
          id: '1',
          method,
          path,
          host: 'api.example.com',
          scheme: 'http',
          protocol: 'HTTP/1.1',
          headers: {
            ':authority': 'api.example.com',
            ':method': method,
            ':path': path,
            ':scheme': 'http',
            ...headers,
          },
        },
      },
    },
  };
}

const check = (request: unknown) =>
  new Promise<CheckResponse>((resolve, reject) =>
    client.Check(request, (err, answer) => (err ? reject(err) : resolve(answer))),
  );

/** `/auth/verify` as Envoy's HTTP ext_authz asks it: the same request, the original path appended. */
function httpVerify(method: string, path: string, headers: Record<string, string>) {
  return fetch(`http://127.0.0.1:${s.gw.bound.forwardAuth?.port}/auth/verify${path}`, {
    method,
    headers: { host: 'api.example.com', ...headers },
  });
}

const headersOf = (options: HeaderOption[] | undefined) =>
  Object.fromEntries((options ?? []).map((o) => [o.header.key, o.header.value]));

describe('Envoy gRPC ext_authz: the verdict of /auth/verify', () => {
  it('allowed: OK, the identity headers to set, client copies and spoofs to remove', async () => {
    const sent = {
      authorization: `Bearer ${s.token}`,
      'x-tenant-id': 'acme',
      'x-user-id': 'mallory',
      'x-user-id-bin': 'bWFsbG9yeQ==',
      'x-forwarded-user': 'mallory',
    };
    const answer = await check(envoyCheck('GET', '/orders/items?x=1', sent));
    expect(answer.status.code).toBe(grpc.status.OK);
    expect(answer.http_response).toBe('ok_response');
    const set = headersOf(answer.ok_response?.headers);
    const http = await httpVerify('GET', '/orders/items?x=1', sent);
    expect(http.status).toBe(200);
    const removed = answer.ok_response?.headers_to_remove ?? [];
    // An identity header /auth/verify answers empty is removed instead (Envoy drops empty values).
    for (const name of [
      'x-tenant-id',
      'x-tenant-type',
      'x-user-id',
      'x-user-email',
      'x-client-id',
    ]) {
      const value = http.headers.get(name);
      if (value === '') expect(removed).toContain(name);
      else expect(set[name]).toBe(value);
    }
    expect(set['x-tenant-id']).toBe('acme');
    expect(set['x-user-id']).not.toBe('mallory');
    expect(removed).toEqual(
      expect.arrayContaining(['x-user-id-bin', 'x-forwarded-user', 'x-client-id']),
    );
    expect(removed).not.toContain('x-user-id');
  });

  it('no token: UNAUTHENTICATED, denied with the 401, challenge and body /auth/verify gives', async () => {
    const answer = await check(envoyCheck('GET', '/orders/items', {}));
    const http = await httpVerify('GET', '/orders/items', {});
    expect(answer.status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(answer.http_response).toBe('denied_response');
    expect(Number(answer.denied_response?.status.code)).toBe(401);
    expect(http.status).toBe(401);
    expect(answer.denied_response?.body).toBe(await http.text());
    expect(headersOf(answer.denied_response?.headers)['www-authenticate']).toBe(
      http.headers.get('www-authenticate'),
    );
  });

  it('another tenant: PERMISSION_DENIED, denied 403 tenant_mismatch as /auth/verify', async () => {
    const sent = { authorization: `Bearer ${s.token}`, 'x-tenant-id': 'globex' };
    const answer = await check(envoyCheck('POST', '/orders/items', sent));
    const http = await httpVerify('POST', '/orders/items', sent);
    expect(answer.status.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(answer.status.message).toBe('tenant_mismatch');
    expect(Number(answer.denied_response?.status.code)).toBe(403);
    expect(http.status).toBe(403);
    expect(JSON.parse(answer.denied_response?.body ?? '{}')).toEqual(await http.json());
  });
});

describe('each check is counted and logged as /auth/verify requests are (route ext-authz)', () => {
  const counted = (samples: Sample[], labels: Record<string, string>) =>
    total(samples, 'tenant_gateway_requests_total', { route: 'ext-authz', ...labels });
  const timed = (samples: Sample[], outcome: string) =>
    total(samples, 'tenant_gateway_request_duration_seconds_count', {
      route: 'ext-authz',
      outcome,
    });

  it('an allowed and a refused check: tenant_gateway_requests_total and the duration histogram', async () => {
    const before = await scrape(adminUrlOf(s.gw));
    const sent = { authorization: `Bearer ${s.token}`, 'x-tenant-id': 'acme' };
    expect((await check(envoyCheck('GET', '/orders/items', sent))).status.code).toBe(
      grpc.status.OK,
    );
    expect((await check(envoyCheck('GET', '/orders/items', {}))).status.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    const after = await scrape(adminUrlOf(s.gw));
    const allowed = {
      method: 'GET',
      code: '200',
      outcome: 'accepted',
      reason: '',
      principal: 'user',
    };
    expect(counted(after, allowed) - counted(before, allowed)).toBe(1);
    const refused = { method: 'GET', code: '401', outcome: 'refused', reason: 'invalid_token' };
    expect(counted(after, refused) - counted(before, refused)).toBe(1);
    expect(timed(after, 'accepted') - timed(before, 'accepted')).toBe(1);
    expect(timed(after, 'refused') - timed(before, 'refused')).toBe(1);
    // Not counted a second time under the forward-auth listener's label.
    expect(total(after, 'tenant_gateway_requests_total', { route: 'forward-auth' })).toBe(
      total(before, 'tenant_gateway_requests_total', { route: 'forward-auth' }),
    );
  });

  it('a refused check: its access-log line with the original request, the reason, never the token', async () => {
    const sent = { authorization: `Bearer ${s.token}`, 'x-tenant-id': 'globex' };
    const request = envoyCheck('DELETE', '/orders/7?secret=q', {
      ...sent,
      'x-request-id': 'check-line-1',
    });
    expect((await check(request)).status.code).toBe(grpc.status.PERMISSION_DENIED);
    const line = await lineOf('check-line-1');
    expect(line).toMatchObject({
      msg: 'request',
      route: 'ext-authz',
      method: 'DELETE',
      status: 403,
      outcome: 'refused',
      reason: 'tenant_mismatch',
      requestedTenant: 'globex',
      tenantId: 'acme',
      clientIp: '127.0.0.1',
      original: { host: 'api.example.com', uri: '/orders/7' },
    });
    expect(JSON.stringify(line)).not.toContain(s.token);
    expect(JSON.stringify(line)).not.toContain('secret=q');
  });
});

async function lineOf(requestId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const line = s.lines.find((l) => l.requestId === requestId);
    if (line !== undefined) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no log line of ${requestId}`);
}
