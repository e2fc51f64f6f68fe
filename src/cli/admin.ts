/**
 * The CLI's store commands for seeds, users and tenants (memberships:
 * `members.ts`; machine clients: `clients.ts`, `api-keys.ts`). They
 * talk to the configured Redis store directly: with the in-memory store there
 * is nothing outside the running gateway to change. Results go to stdout as
 * JSON; logs go to stderr. Each change is an audit event (`source: cli`).
 */
import { isValidTenantId } from '../auth/accounts.js';
import { isDisabledHash } from '../auth/revocation/disabled.js';
import { applySeed, readSeedFile, tenantDiffers } from '../auth/seed.js';
import { tenantRecord } from '../api/representations.js';
import type { LoadedConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { changePassword, createUser } from '../identity/users.js';
import { readSecret } from './read-secret.js';
import {
  cliActor,
  operator,
  emailOption,
  envOption,
  orgTenant,
  print,
  requireRedis,
  withCore,
} from './store-command.js';
import { UsageError } from './usage-error.js';

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
  options: PasswordOptions & { name?: string; verified?: boolean },
): Promise<void> {
  requireRedis(loaded);
  emailOption('EMAIL', email);
  const password = await readSecret({ prompt: 'Password: ', ...envOption(options.passwordEnv) });
  await withCore(loaded, async (core) => {
    const user = await createUser(core, operator(), {
      email,
      password,
      ...(options.name ? { name: options.name } : {}),
      // The operator's word that the address is the person's (issue 45).
      emailVerified: options.verified === true,
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
    const user = await core.store.users.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    await changePassword(core, operator(), user, password);
    print({ user_id: user.id, user_email: user.email, sessions: 'ended' });
  });
}

export async function userList(loaded: LoadedConfig): Promise<void> {
  await withCore(loaded, async (core) => {
    const users = await core.store.users.listUsers();
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
    const user = await core.store.users.findUserByEmail(email);
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
    const user = await core.store.users.findUserByEmail(email);
    const left = user === null ? null : await core.store.users.removeUser(user.id);
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
    const existing = await core.store.tenants.getTenant(tenantId);
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
    const tenant = await core.store.tenants.upsertTenant(input, Math.floor(Date.now() / 1000));
    if (existing === null || tenantDiffers(existing, input))
      await core.audit.record(existing === null ? 'tenant_created' : 'tenant_updated', cliActor(), {
        tenant_id: tenantId,
      });
    print(tenantRecord(tenant));
  });
}

export async function tenantList(loaded: LoadedConfig): Promise<void> {
  await withCore(loaded, async (core) =>
    print((await core.store.tenants.listTenants()).map(tenantRecord)),
  );
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
    const removed = await core.store.tenants.removeOrgTenant(tenantId);
    if (removed === null) throw new UsageError(`no tenant ${tenantId}`);
    await core.audit.record('tenant_removed', cliActor(), {
      tenant_id: tenantId,
      user_ids: removed,
    });
    const users = await Promise.all(removed.map((id) => core.store.users.getUser(id)));
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

// Membership commands moved to members.ts; kept importable from here for their callers.
export { memberChange, memberList } from './members.js';
