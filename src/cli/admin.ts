/**
 * The CLI's store commands (seed, users, tenants, memberships). They
 * talk to the configured Redis store directly: with the in-memory store there
 * is nothing outside the running gateway to change. Results go to stdout as
 * JSON; logs go to stderr. Each change is an audit event (`source: cli`).
 */
import { userInfo } from 'node:os';
import type { AuditActor } from '../audit/events.js';
import { checkEmail, isValidTenantId } from '../auth/accounts.js';
import { isDisabledHash } from '../auth/disabled.js';
import { applySeed, readSeedFile, tenantDiffers } from '../auth/seed.js';
import { tenantRecord } from '../api/representations.js';
import type { LoadedConfig } from '../config/index.js';
import { createCore, type Core } from '../core.js';
import { createLogger } from '../ops/logger.js';
import type { TenantRecord } from '../store/types.js';
import { readSecret } from './read-secret.js';
import { UsageError } from './usage-error.js';
import { lineSafe } from '../ops/line-safe.js';

function requireRedis(loaded: LoadedConfig): void {
  if (loaded.config.store.redis === undefined) {
    throw new UsageError(
      'store.redis is not configured: the in-memory store lives only inside a running gateway. Point --config (or GATEWAY_CONFIG) at a config with store.redis.',
    );
  }
}

async function withCore<T>(loaded: LoadedConfig, work: (core: Core) => Promise<T>): Promise<T> {
  requireRedis(loaded);
  // stdout carries the command's JSON; the signing-key notices of createCore do
  // not concern these commands, so only errors are logged.
  const log = createLogger({ level: 'error', destination: process.stderr });
  const core = await createCore(loaded.config, log);
  try {
    return await work(core);
  } finally {
    await core.close();
  }
}

/** The CLI's audit actor: the OS account that ran it (the store knows no admin users). */
function cliActor(): AuditActor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = 'unknown';
  }
  return { source: 'cli', actor: `cli:${name}` };
}

/** Results as JSON; a user's name or e-mail holds no raw U+2028/U+2029 or C1 control for the terminal. */
const print = (value: unknown) =>
  process.stdout.write(`${lineSafe(JSON.stringify(value, null, 2))}\n`);

export async function seedCommand(loaded: LoadedConfig, file: string): Promise<void> {
  requireRedis(loaded);
  const seed = await readSeedFile(file);
  await withCore(loaded, async (core) => print(await applySeed(seed, core)));
}

export interface PasswordOptions {
  passwordEnv?: string;
}

export async function userAdd(
  loaded: LoadedConfig,
  email: string,
  options: PasswordOptions & { name?: string },
): Promise<void> {
  requireRedis(loaded);
  emailOption('EMAIL', email);
  const password = await readSecret({ prompt: 'Password: ', ...envOption(options.passwordEnv) });
  await withCore(loaded, async (core) => {
    const user = await core.accounts.signUp({
      email,
      password,
      ...(options.name ? { name: options.name } : {}),
    });
    await core.audit.record('user_created', cliActor(), {
      tenant_id: user.personalTenantId,
      user_id: user.id,
      user_email: user.email,
    });
    print({ user_id: user.id, user_email: user.email, tenant_id: user.personalTenantId });
  });
}

export async function userPassword(
  loaded: LoadedConfig,
  email: string,
  options: PasswordOptions,
): Promise<void> {
  requireRedis(loaded);
  const password = await readSecret({
    prompt: 'New password: ',
    ...envOption(options.passwordEnv),
  });
  await withCore(loaded, async (core) => {
    const user = await core.store.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    await core.accounts.changePassword(user, password);
    await core.audit.record('password_changed', cliActor(), {
      user_id: user.id,
      user_email: user.email,
    });
    print({ user_id: user.id, user_email: user.email, sessions: 'ended' });
  });
}

export async function userList(loaded: LoadedConfig): Promise<void> {
  await withCore(loaded, async (core) => {
    const users = await core.store.listUsers();
    print(
      users.map((u) => ({
        user_id: u.id,
        user_email: u.email,
        tenant_id: u.personalTenantId,
        disabled: isDisabledHash(u.passwordHash),
      })),
    );
  });
}

/**
 * `user disable` / `user enable`: a disabled user's logins are refused like a
 * wrong password, and every token of theirs is refused on every instance
 * before the command returns. Enabling lets them log in again; their old
 * tokens stay refused.
 */
export async function userSetDisabled(
  loaded: LoadedConfig,
  email: string,
  disabled: boolean,
): Promise<void> {
  await withCore(loaded, async (core) => {
    const user = await core.store.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    const changed = await core.accounts.setDisabled(user, disabled);
    if (changed)
      await core.audit.record(disabled ? 'user_disabled' : 'user_enabled', cliActor(), {
        user_id: user.id,
        user_email: user.email,
      });
    print({
      user_id: user.id,
      user_email: user.email,
      disabled,
      ...(changed ? { sessions: 'ended' } : { unchanged: true }),
    });
  });
}

/**
 * `user remove`: the user, their personal tenant and every membership of
 * theirs go in one store write, which ends all their tokens on every
 * instance before this returns. A seed that names the user (`seed:` in the
 * config) creates them afresh at the next start: take them out of it too.
 */
export async function userRemove(loaded: LoadedConfig, email: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const user = await core.store.findUserByEmail(email);
    const left = user === null ? null : await core.store.removeUser(user.id);
    if (user === null || left === null) throw new UsageError(`no user ${email}`);
    await auditUserRemoved(core, user.id, user.email, user.personalTenantId, left);
    print({
      user_id: user.id,
      user_email: user.email,
      tenant_id: user.personalTenantId,
      removed: true,
      memberships_ended: left,
      sessions: 'ended',
    });
  });
}

export interface TenantOptions {
  name: string;
  region: string;
  createdBy: string;
}

export async function tenantAdd(
  loaded: LoadedConfig,
  tenantId: string,
  options: TenantOptions,
): Promise<void> {
  if (!isValidTenantId(tenantId)) {
    throw new UsageError('tenant id must be a lower-case DNS label (a-z 0-9 - _), not "current"');
  }
  const createdBy = emailOption('--created-by', options.createdBy);
  await withCore(loaded, async (core) => {
    const existing = await core.store.getTenant(tenantId);
    if (existing?.type === 'usertenant') {
      throw new UsageError(`${tenantId} is a personal tenant; org tenants need an id of their own`);
    }
    const input = {
      tenantId,
      type: 'orgtenant' as const,
      name: options.name,
      cloudRegion: options.region,
      createdBy,
    };
    const tenant = await core.store.upsertTenant(input, Math.floor(Date.now() / 1000));
    if (existing === null || tenantDiffers(existing, input))
      await core.audit.record(existing === null ? 'tenant_created' : 'tenant_updated', cliActor(), {
        tenant_id: tenantId,
      });
    print(tenantRecord(tenant));
  });
}

export async function tenantList(loaded: LoadedConfig): Promise<void> {
  await withCore(loaded, async (core) => print((await core.store.listTenants()).map(tenantRecord)));
}

/**
 * `tenant remove`: an org tenant and its memberships go in one store write;
 * every member's tokens for it are refused on every instance before this
 * returns (their tokens for other tenants keep working, as after
 * `member remove`). A personal tenant goes only with its user.
 */
export async function tenantRemove(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId, 'it goes only with its user (user remove)');
    const removed = await core.store.removeOrgTenant(tenantId);
    if (removed === null) throw new UsageError(`no tenant ${tenantId}`);
    await core.audit.record('tenant_removed', cliActor(), {
      tenant_id: tenantId,
      user_ids: removed,
    });
    const users = await Promise.all(removed.map((id) => core.store.getUser(id)));
    print({
      tenant_id: tenantId,
      removed: true,
      members_removed: removed.map((id, i) => ({
        user_id: id,
        user_email: users[i]?.email ?? null,
      })),
    });
  });
}

/**
 * Adds or removes an org tenant's member. A removal ends the user's access to
 * the tenant on every running instance before this returns: the store
 * publishes `membership-removed` with the write, and their tokens for the
 * tenant are refused (401) and their WebSockets to it closed (1008) — for
 * good: adding them back gives the membership a new generation, which only
 * tokens issued since carry.
 */
export async function memberChange(
  loaded: LoadedConfig,
  action: 'add' | 'remove',
  tenantId: string,
  email: string,
): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId);
    const user = await core.store.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    // Only a membership that began or ended is an event: both calls are idempotent.
    const changed =
      action === 'add'
        ? !(await core.store.isMember(tenantId, user.id)) &&
          (await core.store.addMember(tenantId, user.id))
        : await core.store.removeMember(tenantId, user.id);
    if (changed)
      await core.audit.record(action === 'add' ? 'member_added' : 'member_removed', cliActor(), {
        tenant_id: tenantId,
        user_id: user.id,
        user_email: user.email,
      });
    print(await membersOf(core, tenantId));
  });
}

export async function memberList(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    if ((await core.store.getTenant(tenantId)) === null) {
      throw new UsageError(`no tenant ${tenantId}`);
    }
    print(await membersOf(core, tenantId));
  });
}

/**
 * Memberships and removal concern org tenants only: a personal tenant has
 * exactly its user, and lives and dies with them.
 * @param personal why a personal tenant is refused
 */
async function orgTenant(
  core: Core,
  tenantId: string,
  personal = 'its membership does not change',
): Promise<TenantRecord> {
  const tenant = await core.store.getTenant(tenantId);
  if (tenant === null) throw new UsageError(`no tenant ${tenantId}`);
  if (tenant.type !== 'orgtenant') {
    throw new UsageError(`${tenantId} is a personal tenant: ${personal}`);
  }
  return tenant;
}

/**
 * `user_removed` in the user-level stream; each org tenant the user left also
 * gets a `member_removed` in its own stream, where its operators look.
 */
async function auditUserRemoved(
  core: Core,
  userId: string,
  email: string,
  personalTenantId: string,
  left: string[],
): Promise<void> {
  const actor = cliActor();
  const subject = { user_id: userId, user_email: email };
  await core.audit.record('user_removed', actor, { ...subject, tenant_ids: left });
  for (const tenantId of left.filter((id) => id !== personalTenantId))
    await core.audit.record('member_removed', actor, { ...subject, tenant_id: tenantId });
}

async function membersOf(core: Core, tenantId: string) {
  const ids = await core.store.listMembers(tenantId);
  const users = await Promise.all(ids.map((id) => core.store.getUser(id)));
  return {
    tenant_id: tenantId,
    members: ids.map((id, i) => ({ user_id: id, user_email: users[i]?.email ?? null })),
  };
}

function emailOption(label: string, value: string): string {
  try {
    return checkEmail(value);
  } catch {
    throw new UsageError(`${label} must be an e-mail address`);
  }
}

function envOption(name: string | undefined): { envVar?: string } {
  return name === undefined ? {} : { envVar: name };
}
