/**
 * A user without a password: one a tenant's identity provider created at its
 * first sign-in. The stored hash is `*` (as `/etc/shadow` marks an account no
 * password opens): no bcrypt hash is `*`, so no password matches it, and a
 * Basic login of such a user costs and answers what an unknown e-mail does.
 * Setting a password (`tenant-gateway user password`) gives them one; disabling
 * wraps it like any hash (`disabled.ts`).
 */
export const NO_PASSWORD = '*';

export function hasNoPassword(hash: string): boolean {
  return hash === NO_PASSWORD;
}
