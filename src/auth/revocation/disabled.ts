/**
 * A disabled user, as `passwd -l` locks a Unix account: the password hash is
 * kept behind a `!` that no bcrypt hash starts with, so no password matches
 * it, and re-enabling restores the very hash. Disabling and enabling replace
 * the hash through the store's password write, which bumps the session
 * version and publishes `session-ended`: every token of the user is refused
 * on every instance before the write resolves, as after a password change.
 */
const MARK = '!';

export function isDisabledHash(hash: string): boolean {
  return hash.startsWith(MARK);
}

export function disabledHash(hash: string): string {
  return isDisabledHash(hash) ? hash : `${MARK}${hash}`;
}

export function enabledHash(hash: string): string {
  return isDisabledHash(hash) ? hash.slice(MARK.length) : hash;
}
