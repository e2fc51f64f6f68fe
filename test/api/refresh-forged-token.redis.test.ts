/**
 * Issue 42, against the built process on each store (in-memory, and Redis
 * whose rotation is a Lua script): a family id is public — every access token
 * carries it as `fid`, and upstreams see access tokens — and a refresh
 * token's checksum is a public CRC, so anyone who saw an access token of a
 * family (expired or not) builds a well-formed refresh token for it. Such a
 * token is refused (400 invalid_grant) and ends nothing: the user's current
 * refresh token still rotates and their access token still works. A real
 * token the family used before is still reuse, and ends the family.
 */
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksum } from '../../src/auth/secrets.js';
import { basic, bearer, uniquePrefix } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  signingKeyFile,
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

let redis: TestRedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await stopGatewayProcesses();
  await redis?.stop();
});

const STORES = {
  memory: () => '',
  redis: () => `store: { redis: { url: "${redis.url}", keyPrefix: "${uniquePrefix()}" } }`,
};

const configText = (store: string) => `
listen: { host: 127.0.0.1, port: 0 }
${store}
seed: ./seed.yaml
passwords: { bcryptCost: 4 }
tokens: { keys: ./keys, ttlSeconds: 600, refresh: { enabled: true } }
`;

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
}

const refresh = (gw: GatewayProcess, token: string) =>
  fetch(`${gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
  });

async function refreshed(gw: GatewayProcess, token: string): Promise<TokenAnswer> {
  const res = await refresh(gw, token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenAnswer;
}

async function login(gw: GatewayProcess): Promise<TokenAnswer> {
  const res = await fetch(`${gw.url}/1/token?tenant_id=${TENANT}`, {
    headers: { authorization: basic(OPERATOR.email, OPERATOR.password) },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as TokenAnswer;
}

const tenantWith = (gw: GatewayProcess, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

/** What anyone holding an access token builds: `tgr_<fid>_<43 random chars>_<crc>`. */
function forgedFor(accessToken: string): string {
  const fid = decodeJwt(accessToken).fid as string;
  const body = `tgr_${fid}_${randomBytes(32).toString('base64url')}`;
  return `${body}_${checksum(body)}`;
}

describe.each(Object.keys(STORES) as (keyof typeof STORES)[])('on the %s store', (store) => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayProcess(configText(STORES[store]()), {
      files: { 'seed.yaml': SEED_YAML, ...signingKeyFile() },
    });
  });

  it('a refresh token forged from an access token’s fid is 400 invalid_grant and ends nothing', async () => {
    const first = await login(gw);
    const current = await refreshed(gw, first.refresh_token);
    // The first access token is enough (an upstream saw it); its fid is the family's.
    expect(decodeJwt(current.access_token).fid).toBe(decodeJwt(first.access_token).fid);
    for (let i = 0; i < 3; i++) {
      const forged = forgedFor(first.access_token);
      expect(forged).toMatch(/^tgr_[a-z2-7]{26}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/);
      await expectError(await refresh(gw, forged), 400, 'invalid_grant');
    }
    // The user's session goes on: their access token works, their refresh token rotates.
    expect((await tenantWith(gw, current.access_token)).status).toBe(200);
    const next = await refreshed(gw, current.refresh_token);
    expect((await tenantWith(gw, current.access_token)).status).toBe(200);
    expect((await tenantWith(gw, next.access_token)).status).toBe(200);
    expect((await refresh(gw, next.refresh_token)).status).toBe(200);
  });

  it('a real token the family used before is still reuse: the family and its access tokens end', async () => {
    const first = await login(gw);
    const second = await refreshed(gw, first.refresh_token);
    const current = await refreshed(gw, second.refresh_token);
    await expectError(await refresh(gw, forgedFor(first.access_token)), 400, 'invalid_grant');
    expect((await tenantWith(gw, current.access_token)).status).toBe(200);
    // The stolen first token, two rotations back: remembered as used.
    await expectError(await refresh(gw, first.refresh_token), 400, 'invalid_grant');
    expect((await tenantWith(gw, current.access_token)).status).toBe(401);
    await expectError(await refresh(gw, current.refresh_token), 400, 'invalid_grant');
  });
});
