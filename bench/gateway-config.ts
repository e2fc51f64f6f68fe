/**
 * The gateway's files for a benchmark run, in a temp directory: a config
 * (DESIGN §3), a seed with one user and one org tenant, and a keys directory
 * holding one P-256 key. ES256, not EdDSA: HAProxy's `jwt_verify` (the C peer
 * of issue 13) knows only the algorithms of RFC 7518 §3.1, and every target
 * gets the same token. The gateway verifies a token once and caches the
 * verdict, so the algorithm does not show in its per-request figures.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { defaultPasswordThreads } from '../src/auth/passwords/passwords.js';

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

/** The token's `iss` and `aud` (set in the config, checked by the HAProxy peer too). */
export const TOKEN_ISSUER = 'tenant-gateway';
export const TOKEN_AUDIENCE = 'tenant-api';

/** What the gateway is started with. */
export interface GatewayFiles {
  dir: string;
  configFile: string;
  /** The signing key's public half (SPKI PEM), for peers that verify the token themselves. */
  publicKeyFile: string;
}

/**
 * Writes the files into a fresh temp directory. bcrypt cost 10 (the default)
 * and login limits high enough that a login storm is measured, not throttled.
 */
export function writeGatewayFiles(options: {
  port: number;
  /** An admin listener (/metrics, /healthz) on 127.0.0.1 at this port; none when omitted. */
  adminPort?: number;
  redisUrl: string;
  upstream: string;
  /** bcrypt worker threads; default {@link PASSWORD_WORKERS}. */
  passwordWorkers?: number;
  /** `apiKeys: { enabled: true }`: only for a build whose config knows the section. */
  apiKeys?: boolean;
}): GatewayFiles {
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-gateway-'));
  const keys = join(dir, 'keys');
  mkdirSync(keys, { mode: 0o700 });
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  writeFileSync(join(keys, 'bench.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  const publicKeyFile = join(dir, 'bench.pub.pem');
  writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));

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
      ...(options.adminPort === undefined
        ? {}
        : { admin: { host: '127.0.0.1', port: options.adminPort } }),
      store: { redis: { url: options.redisUrl, keyPrefix: 'bench:' } },
      seed: seedFile,
      // Long enough for the soak: the token must not expire mid-run.
      tokens: { keys, ttlSeconds: 86_400, issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE },
      passwords: { bcryptCost: 10, workers: options.passwordWorkers ?? PASSWORD_WORKERS },
      // Nor queue-limited (issue 12's 429 past a few queued logins per e-mail
      // or address): the storm's logins all come from one user on one address.
      limits: {
        login: {
          perEmail: 1_000_000,
          perIp: 1_000_000,
          maxQueuedPerEmail: 1_000,
          maxQueuedPerIp: 1_000,
        },
      },
      routes: [
        { prefix: ROUTE_PREFIX, upstream: options.upstream, tenant: { header: 'X-Tenant-Id' } },
      ],
      ...(options.apiKeys === true ? { apiKeys: { enabled: true } } : {}),
      // Issue 13's targets are for the gateway with its access log at info.
      log: { level: 'info' },
    }),
  );
  return { dir, configFile, publicKeyFile };
}

/**
 * A copy of the gateway's config with tracing on at `sampleRatio`, spans
 * exported to `otlpEndpoint`; returns its path.
 */
export function withTracing(
  files: GatewayFiles,
  sampleRatio: number,
  otlpEndpoint: string,
): string {
  if (!(sampleRatio >= 0 && sampleRatio <= 1)) throw new Error('the sample ratio is 0..1');
  const config = parse(readFileSync(files.configFile, 'utf8')) as Record<string, unknown>;
  const traced = join(files.dir, 'gateway-traced.yaml');
  writeFileSync(
    traced,
    stringify({ ...config, tracing: { enabled: true, sampleRatio, otlpEndpoint } }),
  );
  return traced;
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
