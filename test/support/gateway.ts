/**
 * Starts a real gateway in this process on a real socket (127.0.0.1, port 0),
 * built from a config object exactly as `serve` builds it.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { generateKeyFile } from '../../src/auth/tokens/keys.js';
import { validateConfig } from '../../src/config/index.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { BoundAddresses } from '../../src/gateway/listeners.js';
import { createLogger } from '../../src/ops/logger.js';

export interface TestGateway {
  url: string;
  /** The admin listener (`/healthz`, `/readyz`, `/metrics`), when `raw` has `admin`. */
  adminUrl: string | undefined;
  gateway: Gateway;
  /** Every address the gateway bound (forward-auth's and Envoy ext_authz's too, when configured). */
  bound: BoundAddresses;
  close(): Promise<void>;
}

/**
 * `raw`'s `listen` and `admin` (when it has one) are moved to free ports on
 * 127.0.0.1 (`listen` to `options.port` when given: a `publicUrl` names it); `listen.opsEndpoints` and the other `admin` keys are kept.
 */
export async function startTestGateway(
  raw: Record<string, unknown>,
  options: { logTo?: NodeJS.WritableStream; port?: number; clock?: () => number } = {},
): Promise<TestGateway> {
  const onFreePort = (key: string) => ({
    ...(raw[key] as Record<string, unknown> | undefined),
    host: '127.0.0.1',
    port: key === 'listen' ? (options.port ?? 0) : 0,
  });
  const config = validateConfig(
    {
      ...raw,
      listen: onFreePort('listen'),
      ...(raw.admin === undefined ? {} : { admin: onFreePort('admin') }),
      log: { level: 'silent' },
    },
    process.cwd(),
    'test',
  );
  const log =
    options.logTo === undefined
      ? pino({ level: 'silent' })
      : createLogger({ level: 'debug', destination: options.logTo });
  const gateway = await createGateway(
    config,
    log,
    options.clock === undefined ? {} : { clock: options.clock },
  );
  const bound = await gateway.listen();
  const { main, admin } = bound;
  return {
    url: `http://127.0.0.1:${main.port}`,
    adminUrl: admin === undefined ? undefined : `http://127.0.0.1:${admin.port}`,
    gateway,
    bound,
    close: () => gateway.close(),
  };
}

/** The admin listener's URL (health, readiness, metrics); throws when the config has no `admin`. */
export function adminUrlOf(gw: TestGateway): string {
  if (gw.adminUrl === undefined)
    throw new Error(`the gateway at ${gw.url} has no admin listener: configure \`admin\``);
  return gw.adminUrl;
}

/** A fresh key directory holding one Ed25519 key; returns the dir, the kid and the PEM. */
export async function makeKeysDir(): Promise<{ dir: string; kid: string; pem: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
  await generateKeyFile(dir);
  const file = readdirSync(dir)[0] as string;
  return { dir, kid: file.replace(/\.pem$/, ''), pem: readFileSync(join(dir, file), 'utf8') };
}

/** A key prefix no other test uses, so tests share a Redis without flushing it. */
export function uniquePrefix(): string {
  return `t${randomUUID().slice(0, 8)}:`;
}

export function basic(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`, 'utf8').toString('base64')}`;
}

export const bearer = (token: string): string => `Bearer ${token}`;

/** A request to `base` with a bearer token and, when given, a JSON body (the admins' API). */
export function bearerJson(
  base: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: bearer(token),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
