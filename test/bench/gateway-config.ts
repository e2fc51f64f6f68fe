/**
 * The gateway's files for a benchmark run, in a temp directory: a config
 * (DESIGN §3), a seed with one user and one org tenant, and a keys directory
 * holding one Ed25519 key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { defaultPasswordThreads } from '../../src/auth/passwords.js';

/** The gateway's bcrypt pool, set explicitly so the login ceiling uses the same number. */
export const PASSWORD_WORKERS = defaultPasswordThreads();

/** The seeded user; a member of {@link BENCH_TENANT}. */
export const BENCH_USER = { email: 'bench@example.com', password: 'bench-password-1' };
/** The seeded org tenant the benchmark's token is for. */
export const BENCH_TENANT = 'bench-org';
/** Where the proxied route is mounted. */
export const ROUTE_PREFIX = '/api';
/** The path every benchmark request asks for, under {@link ROUTE_PREFIX}. */
export const REQUEST_PATH = `${ROUTE_PREFIX}/orders/1`;

/** What the gateway is started with. */
export interface GatewayFiles {
  dir: string;
  configFile: string;
}

/**
 * Writes the files into a fresh temp directory. bcrypt cost 10 (the default)
 * and login limits high enough that a login storm is measured, not throttled.
 */
export function writeGatewayFiles(options: {
  port: number;
  redisUrl: string;
  upstream: string;
}): GatewayFiles {
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-gateway-'));
  const keys = join(dir, 'keys');
  mkdirSync(keys, { mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(keys, 'bench.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });

  const seedFile = join(dir, 'seed.yaml');
  writeFileSync(
    seedFile,
    stringify({
      users: [BENCH_USER],
      tenants: [
        {
          tenant_id: BENCH_TENANT,
          type: 'orgtenant',
          name: 'Bench Org',
          cloud_region: 'local',
          created_by: BENCH_USER.email,
          members: [BENCH_USER.email],
        },
      ],
    }),
  );

  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(
    configFile,
    stringify({
      listen: { host: '127.0.0.1', port: options.port },
      store: { redis: { url: options.redisUrl, keyPrefix: 'bench:' } },
      seed: seedFile,
      // Long enough for the soak: the token must not expire mid-run.
      tokens: { keys, ttlSeconds: 86_400 },
      passwords: { bcryptCost: 10, workers: PASSWORD_WORKERS },
      limits: { login: { perEmail: 1_000_000, perIp: 1_000_000 } },
      routes: [
        { prefix: ROUTE_PREFIX, upstream: options.upstream, tenant: { header: 'X-Tenant-Id' } },
      ],
      log: { level: 'warn' },
    }),
  );
  return { dir, configFile };
}

/** `Authorization: Basic …` for the seeded user. */
export function basicAuthorization(): string {
  const credentials = `${BENCH_USER.email}:${BENCH_USER.password}`;
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

/** Logs the seeded user in for {@link BENCH_TENANT}; returns the access token. */
export async function fetchToken(gatewayUrl: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/1/token?tenant_id=${BENCH_TENANT}`, {
    headers: { authorization: basicAuthorization() },
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /1/token: ${res.status} ${text}`);
  const token = (JSON.parse(text) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') throw new Error(`GET /1/token: no access_token in ${text}`);
  return token;
}
