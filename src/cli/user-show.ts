/**
 * `user show EMAIL`: one user as the operator needs to see them — the
 * account (id, e-mail, disabled, created, when the address was verified), the tenants they belong to with
 * their role in each, their live sessions (`session list`'s), and how they
 * can sign in (their factors: a password, and the tenant IdP that created
 * them; a confirmed TOTP authenticator with its recovery codes left; passkeys
 * next). Never a secret: a factor is named, never shown.
 */
import { hasNoPassword } from '../auth/passwords/no-password.js';
import { enabledHash, isDisabledHash } from '../auth/revocation/disabled.js';
import { sessionList } from '../api/session-representations.js';
import type { LoadedConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { listSessions } from '../identity/sessions.js';
import { totpFactorOf } from '../identity/totp.js';
import type { UserRecord } from '../store/types.js';
import { sessionDeps, userOf } from './sessions.js';
import { print, withCore } from './store-command.js';

/** A way the user can prove who they are, named (never its secret). */
type Factor =
  | { type: 'password' }
  | { type: 'idp'; tenant_id: string; issuer: string }
  | NonNullable<Awaited<ReturnType<typeof totpFactorOf>>>;

export async function userShow(loaded: LoadedConfig, email: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const user = await userOf(core, email);
    const [memberships, sessions, totp] = await Promise.all([
      membershipsOf(core, user),
      listSessions(sessionDeps(loaded, core), user.id),
      totpFactorOf(core.store, user.id),
    ]);
    print({
      user_id: user.id,
      user_email: user.email,
      ...(user.name === undefined ? {} : { name: user.name }),
      disabled: isDisabledHash(user.passwordHash),
      created_at: user.createdAt,
      // When the address was proven (a mailed link, an IdP, the operator's `--verified`); null: never.
      email_verified_at: user.emailVerifiedAt ?? null,
      personal_tenant_id: user.personalTenantId,
      memberships,
      ...sessionList(sessions),
      factors: [...factorsOf(user), ...(totp === undefined ? [] : [totp])],
    });
  });
}

async function membershipsOf(core: Core, user: UserRecord) {
  const tenants = await core.store.memberships.listUserTenants(user.id);
  const roles = await Promise.all(
    tenants.map((t) => core.store.memberships.getMemberRole(t.tenantId, user.id)),
  );
  return tenants.map((tenant, i) => ({
    tenant_id: tenant.tenantId,
    type: tenant.type,
    name: tenant.name,
    role: roles[i] ?? null,
  }));
}

/** A disabled user keeps their factors (enabling restores them), so the mark is looked through. */
function factorsOf(user: UserRecord): Factor[] {
  const factors: Factor[] = [];
  if (!hasNoPassword(enabledHash(user.passwordHash))) factors.push({ type: 'password' });
  if (user.createdByIdp !== undefined) {
    const { tenantId, issuer } = user.createdByIdp;
    factors.push({ type: 'idp', tenant_id: tenantId, issuer });
  }
  return factors;
}
