/**
 * Issue 42, finding 4, against the built process: a refresh issues the scopes
 * the member's role has in the live config (∩ the family's), so a scope a
 * reload (SIGHUP) takes from the role is gone from the next refreshed token —
 * not kept for the family's 90 days. A scope the reload gives back returns
 * only as far as the family was granted at login.
 */
import { decodeJwt } from 'jose';
import { afterAll, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  startGatewayProcess,
  stopGatewayProcesses,
} from '../support/gateway-process.js';
import { refreshAt } from '../support/account-requests.js';

afterAll(() => stopGatewayProcesses());

/** The config, with what every role grants. */
const configText = (scopes: string[]) => `
listen: { host: 127.0.0.1, port: 0 }
seed: ./seed.yaml
passwords: { bcryptCost: 4 }
tokens: { ttlSeconds: 600, refresh: { enabled: true } }
authorization:
  roles:
    admin: [${scopes.join(', ')}]
    member: [${scopes.join(', ')}]
`;

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  scope: string;
}

async function refreshed(url: string, token: string): Promise<TokenAnswer> {
  const res = await refreshAt(url, token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenAnswer;
}

it('a refresh after a reload took a scope from the role issues a token without it', async () => {
  const gw = await startGatewayProcess(configText(['orders:read', 'orders:write']), {
    files: { 'seed.yaml': SEED_YAML },
  });
  const res = await fetch(`${gw.url}/1/token?tenant_id=${TENANT}`, {
    headers: { authorization: basic(OPERATOR.email, OPERATOR.password) },
  });
  expect(res.status).toBe(200);
  const login = (await res.json()) as TokenAnswer;
  expect(login.scope).toBe('orders:read orders:write');

  gw.rewriteConfig(configText(['orders:read']));
  expect((await gw.sighup()).msg).toBe('config reloaded');
  const after = await refreshed(gw.url, login.refresh_token);
  expect(after.scope).toBe('orders:read');
  expect(decodeJwt(after.access_token).scope).toBe('orders:read');

  // Given back (and more): the family's own scopes, never beyond them.
  gw.rewriteConfig(configText(['orders:read', 'orders:write', 'billing:read']));
  expect((await gw.sighup()).msg).toBe('config reloaded');
  const back = await refreshed(gw.url, after.refresh_token);
  expect(decodeJwt(back.access_token).scope).toBe('orders:read orders:write');
});
