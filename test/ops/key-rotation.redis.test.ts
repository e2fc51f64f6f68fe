/**
 * Issue 5, key rotation, against the built process: `keys add` writes a key
 * that sorts last; after SIGHUP it signs, every key in the directory verifies
 * and is published in the JWKS; removing a key's file (and SIGHUP) stops its
 * tokens. A replica that was not signalled picks a new key up on the first
 * token it cannot place (unknown kid → re-read of the shared directory).
 */
import { generateKeyPairSync } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { bearer, makeKeysDir, uniquePrefix } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  runCli,
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { tokenFor } from '../support/identity-fixture.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

let redis: TestRedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(() => stopGatewayProcesses());
afterAll(async () => {
  await redis?.stop();
});

function configText(keysDir: string, keyPrefix: string): string {
  return `
listen: { host: 127.0.0.1, port: 0 }
store:
  redis: { url: "${redis.url}", keyPrefix: "${keyPrefix}" }
seed: ./seed.yaml
tokens: { keys: "${keysDir}", ttlSeconds: 600 }
passwords: { bcryptCost: 4 }
`;
}

function startGateway(keysDir: string, keyPrefix: string): Promise<GatewayProcess> {
  return startGatewayProcess(configText(keysDir, keyPrefix), { files: { 'seed.yaml': SEED_YAML } });
}

const newToken = async (gw: GatewayProcess) =>
  (await tokenFor(gw.url, OPERATOR, TENANT)).access_token;

/** The `kid` of a JWT's protected header. */
function kidOf(token: string): unknown {
  const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString());
  return (header as { kid?: unknown }).kid;
}

async function jwksKids(gw: GatewayProcess): Promise<string[]> {
  const res = await fetch(`${gw.url}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  const { keys } = (await res.json()) as { keys: { kid: string }[] };
  return keys.map((k) => k.kid);
}

/** GET /1/tenants/current with the token: the status and the `error` code, if any. */
async function useToken(gw: GatewayProcess, token: string) {
  const res = await fetch(`${gw.url}/1/tenants/current`, {
    headers: { authorization: bearer(token) },
  });
  const body = (await res.json()) as { tenant_id?: string; error?: string };
  return {
    status: res.status,
    tenant: body.tenant_id,
    error: body.error,
    challenge: res.headers.get('www-authenticate'),
  };
}

/** `tenant-gateway keys add --config F`; returns the new kid. */
async function addKey(configPath: string): Promise<string> {
  const run = await runCli(['keys', 'add', '--config', configPath]);
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
  return (JSON.parse(run.stdout) as { kid: string }).kid;
}

const ACCEPTED = { status: 200, tenant: TENANT };

it('keys add + SIGHUP: the new key signs, both verify; removing the old key stops its tokens', async () => {
  const keys = await makeKeysDir();
  const a = keys.kid;
  const gw = await startGateway(keys.dir, uniquePrefix());
  const t1 = await newToken(gw);
  expect(kidOf(t1)).toBe(a);
  expect(await jwksKids(gw)).toEqual([a]);

  const b = await addKey(gw.configPath);
  expect(b > a).toBe(true); // sorts last, so it is the one that signs
  // Written, not yet loaded: the running process signs with A until told.
  expect(kidOf(await newToken(gw))).toBe(a);

  expect((await gw.sighup()).msg).toBe('config reloaded');
  expect(await jwksKids(gw)).toEqual([a, b]);
  const t2 = await newToken(gw);
  expect(kidOf(t2)).toBe(b);
  expect(await useToken(gw, t1)).toMatchObject(ACCEPTED);
  expect(await useToken(gw, t2)).toMatchObject(ACCEPTED);

  rmSync(join(keys.dir, `${a}.pem`));
  expect((await gw.sighup()).msg).toBe('config reloaded');
  expect(await useToken(gw, t1)).toEqual({
    status: 401,
    tenant: undefined,
    error: 'invalid_token',
    challenge: expect.stringContaining('error="invalid_token"'),
  });
  expect(await useToken(gw, t2)).toMatchObject(ACCEPTED);
  expect(await jwksKids(gw)).toEqual([b]);
  expect(kidOf(await newToken(gw))).toBe(b);
});

it('a replica that was not signalled accepts a token of the new key (unknown kid → key dir re-read)', async () => {
  const keys = await makeKeysDir();
  const keyPrefix = uniquePrefix(); // one store for both, as replicas share one
  const first = await startGateway(keys.dir, keyPrefix);
  const second = await startGateway(keys.dir, keyPrefix);
  const older = await newToken(second);
  expect(kidOf(older)).toBe(keys.kid);

  const b = await addKey(first.configPath);
  expect((await first.sighup()).msg).toBe('config reloaded');
  const token = await newToken(first);
  expect(kidOf(token)).toBe(b);
  expect(await jwksKids(second)).toEqual([keys.kid]); // it has not looked yet

  expect(await useToken(second, token)).toMatchObject(ACCEPTED);
  expect(await jwksKids(second)).toEqual([keys.kid, b]);
  // The re-read dropped nothing: the old key's tokens still verify there.
  expect(await useToken(second, older)).toMatchObject(ACCEPTED);
  // No SIGHUP ever reached the second process.
  expect(second.logLines().some((l) => /^config reload/.test(l.msg ?? ''))).toBe(false);
});

it('an unknown kid while the key directory holds a file that is not a key: 401, not 500, and the loaded keys keep working', async () => {
  const keys = await makeKeysDir();
  const gw = await startGateway(keys.dir, uniquePrefix());
  const valid = await newToken(gw);
  // A common slip: the public half dropped next to the private keys.
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(
    join(keys.dir, 'public.pem'),
    publicKey.export({ type: 'spki', format: 'pem' }) as string,
  );
  // A well-formed token whose kid the gateway does not know: it re-reads the directory.
  const now = Math.floor(Date.now() / 1000);
  const stranger = await new SignJWT({ tenant_id: TENANT, tenant_type: 'orgtenant', sv: 0 })
    .setProtectedHeader({ alg: 'EdDSA', kid: 'not-ours', typ: 'at+jwt' })
    .setIssuer('tenant-gateway')
    .setAudience('tenant-api')
    .setSubject('someone')
    .setJti('j-1')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(privateKey);

  expect(await useToken(gw, stranger)).toMatchObject({ status: 401, error: 'invalid_token' });
  expect(await useToken(gw, valid)).toMatchObject(ACCEPTED);
  // SIGHUP refuses the directory as a whole and names the file; the old keys stay.
  const outcome = await gw.sighup();
  expect(outcome.msg).toBe('config reload refused: the old config keeps serving');
  expect(JSON.stringify(outcome['err'])).toContain('public.pem');
  expect(await useToken(gw, valid)).toMatchObject(ACCEPTED);
  expect(await jwksKids(gw)).toEqual([keys.kid]);
});
