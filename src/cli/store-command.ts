/**
 * What the CLI's store commands share (`admin.ts`, `members.ts`,
 * `clients.ts`, `api-keys.ts`): the configured Redis store opened for one
 * command, the audit actor, JSON output on stdout, and option checks.
 */
import { userInfo } from 'node:os';
import type { AuditActor } from '../audit/events.js';
import { checkEmail } from '../auth/accounts.js';
import type { LoadedConfig } from '../config/index.js';
import { createCore, type Core } from '../core/create-core.js';
import type { OperatorActor } from '../identity/actor.js';
import { lineSafe } from '../text/line-safe.js';
import { createLogger } from '../ops/logger.js';
import type { TenantRecord } from '../store/types.js';
import { cliIo } from './io.js';
import { UsageError } from './usage-error.js';

export function requireRedis(loaded: LoadedConfig): void {
  if (loaded.config.store.redis === undefined) {
    throw new UsageError(
      'store.redis is not configured: the in-memory store lives only inside a running gateway. Point --config (or GATEWAY_CONFIG) at a config with store.redis.',
    );
  }
}

export async function withCore<T>(
  loaded: LoadedConfig,
  work: (core: Core) => Promise<T>,
): Promise<T> {
  requireRedis(loaded);
  // stdout carries the command's JSON; the signing-key notices of createCore do
  // not concern these commands, so only errors are logged.
  const log = createLogger({ level: 'error', destination: cliIo().stderr });
  const core = await createCore(loaded.config, log);
  try {
    return await work(core);
  } finally {
    await core.close();
  }
}

/** The CLI's audit actor: the OS account that ran it (the store knows no admin users). */
export function cliActor(): AuditActor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = 'unknown';
  }
  return { source: 'cli', actor: `cli:${name}` };
}

/** The operator as the actor of an identity operation (`identity/actor.ts`). */
export const operator = (): OperatorActor => ({ kind: 'operator', audit: cliActor() });

/** Results as JSON; a user's name or e-mail holds no raw U+2028/U+2029 or C1 control for the terminal. */
export const print = (value: unknown) =>
  cliIo().stdout.write(`${lineSafe(JSON.stringify(value, null, 2))}\n`);

/**
 * Memberships, machine clients and removal concern org tenants only: a
 * personal tenant has exactly its user, and lives and dies with them.
 * @param personal why a personal tenant is refused
 */
export async function orgTenant(
  core: Core,
  tenantId: string,
  personal = 'its membership does not change',
): Promise<TenantRecord> {
  const tenant = await core.store.tenants.getTenant(tenantId);
  if (tenant === null) throw new UsageError(`no tenant ${tenantId}`);
  if (tenant.type !== 'orgtenant') {
    throw new UsageError(`${tenantId} is a personal tenant: ${personal}`);
  }
  return tenant;
}

export function emailOption(label: string, value: string): string {
  try {
    return checkEmail(value);
  } catch {
    throw new UsageError(`${label} must be an e-mail address`);
  }
}

export function envOption(name: string | undefined): { envVar?: string } {
  return name === undefined ? {} : { envVar: name };
}

/** `--expires-at`: Unix seconds, in the future. */
export function expiresAtOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = /^\d{1,12}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seconds) || seconds <= Math.floor(Date.now() / 1000)) {
    throw new UsageError('--expires-at must be a Unix time (seconds) in the future');
  }
  return seconds;
}
