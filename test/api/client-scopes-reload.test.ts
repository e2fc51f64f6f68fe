/**
 * Issue 42, finding 3's class for machine clients, against the built process:
 * a client a tenant admin made holds its scopes only as far as the live
 * config allows. After a reload (SIGHUP) takes a scope from the role `admin`,
 * or from `authorization.clientScopes`, the client's next token is issued
 * without it (asked for: `invalid_scope`), and its API key — already known to
 * the running gateway — no longer passes a route requiring it (403
 * `insufficient_scope`). A reload giving the scope back gives it back.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { clientCredentials, type MachineClient } from '../support/machine-client.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

let upstream: CountingUpstream;

beforeAll(async () => {
  upstream = await startEchoUpstream();
});
afterAll(async () => {
  await stopGatewayProcesses();
  await upstream.close();
});

const BOTH = ['orders:read', 'orders:write'];

/** The config: what the role `admin` grants, and `clientScopes` when given. */
const configText = (admin: string[], clientScopes?: string[]) => `
listen: { host: 127.0.0.1, port: 0 }
seed: ./seed.yaml
passwords: { bcryptCost: 4 }
apiKeys: { enabled: true }
authorization:
  roles:
    admin: [${admin.join(', ')}]
    member: [${BOTH.join(', ')}]
${clientScopes === undefined ? '' : `  clientScopes: [${clientScopes.join(', ')}]`}
routes:
  - { prefix: /write, upstream: '${upstream.url}', scopes: { '*': [orders:write] } }
  - { prefix: /read, upstream: '${upstream.url}', scopes: { '*': [orders:read] } }
`;

interface AdminClient extends MachineClient {
  apiKey: string;
}

/** Olga, acme's admin, makes a client holding both scopes and an API key of it, over HTTP. */
async function adminMakesClient(gw: GatewayProcess): Promise<AdminClient> {
  const login = await fetch(`${gw.url}/1/token?tenant_id=${TENANT}`, {
    headers: { authorization: basic(OPERATOR.email, OPERATOR.password) },
  });
  expect(login.status).toBe(200);
  const admin = ((await login.json()) as { access_token: string }).access_token;
  const post = (path: string, body?: unknown) =>
    fetch(`${gw.url}/1/tenants/${TENANT}${path}`, {
      method: 'POST',
      headers: { authorization: bearer(admin), 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
  const made = await post('/clients', { name: 'export', scopes: BOTH });
  expect(made.status, await made.clone().text()).toBe(201);
  const { client_id, client_secret } = (await made.json()) as Record<string, string>;
  const key = await post(`/clients/${client_id}/keys`);
  expect(key.status, await key.clone().text()).toBe(201);
  const { api_key } = (await key.json()) as Record<string, string>;
  return {
    clientId: client_id as string,
    clientSecret: client_secret as string,
    apiKey: api_key as string,
  };
}

/** The scope of the token the grant issues (no scope asked: all the client holds). */
async function tokenScope(gw: GatewayProcess, client: MachineClient): Promise<string> {
  const res = await clientCredentials(gw.url, client);
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { access_token: string; scope: string };
  expect(decodeJwt(body.access_token).scope).toBe(body.scope);
  return body.scope;
}

const withKey = (gw: GatewayProcess, path: string, apiKey: string) =>
  fetch(`${gw.url}${path}`, { headers: { authorization: bearer(apiKey) } });

async function expectBothPass(gw: GatewayProcess, client: AdminClient): Promise<void> {
  expect(await tokenScope(gw, client)).toBe('orders:read orders:write');
  expect((await withKey(gw, '/write/x', client.apiKey)).status).toBe(200);
  expect((await withKey(gw, '/read/x', client.apiKey)).status).toBe(200);
}

/** Soft: the token's and the key's outcomes are each reported. */
async function expectWriteGone(gw: GatewayProcess, client: AdminClient): Promise<void> {
  expect.soft(await tokenScope(gw, client)).toBe('orders:read');
  const asked = await clientCredentials(gw.url, client, { scope: 'orders:write' });
  expect.soft(asked.status).toBe(400);
  expect.soft(((await asked.json()) as { error?: string }).error).toBe('invalid_scope');
  const write = await withKey(gw, '/write/x', client.apiKey);
  expect.soft(write.status).toBe(403);
  expect.soft(((await write.json()) as { error?: string }).error).toBe('insufficient_scope');
  expect((await withKey(gw, '/read/x', client.apiKey)).status).toBe(200);
}

describe("an admin's client after a reload", () => {
  it('loses a scope the reload takes from the role admin, and regains it when given back', async () => {
    const gw = await startGatewayProcess(configText(BOTH), { files: { 'seed.yaml': SEED_YAML } });
    const client = await adminMakesClient(gw);
    await expectBothPass(gw, client);

    gw.rewriteConfig(configText(['orders:read']));
    expect((await gw.sighup()).msg).toBe('config reloaded');
    await expectWriteGone(gw, client);

    gw.rewriteConfig(configText(BOTH));
    expect((await gw.sighup()).msg).toBe('config reloaded');
    await expectBothPass(gw, client);
  }, 60_000);

  it('loses a scope the reload takes from clientScopes', async () => {
    const gw = await startGatewayProcess(configText(BOTH, BOTH), {
      files: { 'seed.yaml': SEED_YAML },
    });
    const client = await adminMakesClient(gw);
    await expectBothPass(gw, client);

    gw.rewriteConfig(configText(BOTH, ['orders:read']));
    expect((await gw.sighup()).msg).toBe('config reloaded');
    await expectWriteGone(gw, client);
  }, 60_000);
});
