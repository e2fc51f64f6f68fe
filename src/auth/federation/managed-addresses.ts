/**
 * Managed addresses (issue 42): an e-mail address whose domain a tenant has
 * verified is managed by that tenant, and its way in is the tenant's identity
 * provider. So nobody else makes an account of it with a password of their
 * choice (signup would otherwise squat `newhire@acme.example` before the real
 * person's first sign-in, and lock them out or share their account), and a
 * local password the address had before its tenant's provider linked it does
 * not survive the link (whoever set it, a squatter or the person before their
 * organisation adopted SSO, the provider is the way in from then on).
 *
 * The operator (`tenant-gateway user add`, the seed) may still create any
 * address: their word is the deployment's, as with `tenant domain add
 * --verified`.
 */
import { GatewayError } from '../../errors.js';
import type { IdpOrigin, Store, UserRecord } from '../../store/types.js';
import { hasNoPassword, NO_PASSWORD } from '../passwords/no-password.js';

/** Who creates a user: its tenant's provider at a first sign-in, the operator, or anyone (signup). */
export type Creator = { idp: IdpOrigin } | 'operator' | 'anyone';

/**
 * Refuses an address whose domain a tenant has verified unless the operator
 * or that tenant's provider creates it. Decided by the domain alone (never by
 * whether the address is registered), before any password work, so the
 * answer says nothing about who has an account.
 * @throws GatewayError `forbidden` (403), naming no tenant
 */
export async function checkCreatable(store: Store, email: string, by: Creator): Promise<void> {
  if (by === 'operator') return;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const holder = await store.domains.verifiedDomainHolder(domain);
  if (holder === null) return;
  if (by !== 'anyone' && by.idp.tenantId === holder) return;
  throw new GatewayError(
    'forbidden',
    'Addresses of this domain sign in through their organisation: use its sign-in, not a password here.',
  );
}

/**
 * Ends the local password of a user a provider links (`link_existing`): the
 * no-password mark in place of the hash, and a new session version, so every
 * token and refresh family of theirs is refused on every instance
 * before this resolves (as a password change does). A user without a
 * password is returned as is.
 * @returns the user as they now are, and whether a password was ended
 */
export async function endLocalPassword(
  store: Store,
  user: UserRecord,
): Promise<{ user: UserRecord; passwordEnded: boolean }> {
  if (hasNoPassword(user.passwordHash)) return { user, passwordEnded: false };
  const sessionVersion = await store.users.setPasswordHash(user.id, NO_PASSWORD);
  if (sessionVersion === null)
    throw new GatewayError('invalid_credentials', 'The user no longer exists.');
  return { user: { ...user, passwordHash: NO_PASSWORD, sessionVersion }, passwordEnded: true };
}
