/**
 * The one-time links of the account mails (issue 45): a 256-bit token
 * (`auth/one-time-tokens.ts`) in a URL on `publicUrl`, its SHA-256 the key of
 * a record in the store (the sso slice, kinds `email-verification` and
 * `password-reset`) that expires with the link and is taken once, atomically:
 * of two concurrent uses one wins, on any instance. A link names its user,
 * the address it was mailed to and the user's session version then, so it
 * dies with a change of address or of password as well as with its use.
 */
import {
  isOneTimeTokenShape,
  newOneTimeToken,
  oneTimeTokenDigest,
} from '../auth/one-time-tokens.js';
import { GatewayError } from '../errors.js';
import { RESET_LINK_SECONDS, VERIFICATION_LINK_SECONDS } from '../mail/account-mails.js';
import { mailedLink } from '../mail/links.js';
import type { Store, UserRecord } from '../store/types.js';

export type LinkKind = 'email-verification' | 'password-reset';

const SECONDS: Readonly<Record<LinkKind, number>> = {
  'email-verification': VERIFICATION_LINK_SECONDS,
  'password-reset': RESET_LINK_SECONDS,
};

/** The links' paths, under `publicUrl`. */
export const LINK_PATHS: Readonly<Record<LinkKind, string>> = {
  'email-verification': '/1/email-verifications',
  'password-reset': '/1/password-resets',
};

interface LinkRecord {
  userId: string;
  email: string;
  sessionVersion: number;
}

/** A new link for `user`, its record written: the URL to mail (and to show nowhere else). */
export async function issueLink(
  deps: { store: Store; publicUrl: string },
  kind: LinkKind,
  user: UserRecord,
): Promise<string> {
  const { token, digest } = newOneTimeToken();
  const record: LinkRecord = {
    userId: user.id,
    email: user.email,
    sessionVersion: user.sessionVersion,
  };
  await deps.store.sso.putSsoRecord(kind, digest, JSON.stringify(record), SECONDS[kind]);
  return mailedLink(deps.publicUrl, `${LINK_PATHS[kind]}/${token}`);
}

/**
 * The user of a live link, the link left in place (a page shown by a GET:
 * a link scanner's visit uses nothing).
 * @throws GatewayError `not_found` (malformed, unknown, used, expired, or its user changed)
 */
export async function readLink(store: Store, kind: LinkKind, token: string): Promise<UserRecord> {
  if (!isOneTimeTokenShape(token)) throw deadLink();
  const value = await store.sso.readSsoRecord(kind, oneTimeTokenDigest(token));
  return userOf(store, kind, value);
}

/**
 * The user of a live link, the link used up in the same atomic step.
 * @throws GatewayError `not_found` (malformed, unknown, used, expired, or its user changed)
 */
export async function takeLink(store: Store, kind: LinkKind, token: string): Promise<UserRecord> {
  if (!isOneTimeTokenShape(token)) throw deadLink();
  const value = await store.sso.takeSsoRecord(kind, oneTimeTokenDigest(token));
  return userOf(store, kind, value);
}

async function userOf(store: Store, kind: LinkKind, value: string | null): Promise<UserRecord> {
  if (value === null) throw deadLink();
  const record = JSON.parse(value) as LinkRecord;
  const user = await store.users.getUser(record.userId);
  // Another address since (the link proves the old one's mailbox), or, for a
  // reset, a password set since: a link mailed before proves nothing now.
  if (user === null || user.email !== record.email) throw deadLink();
  if (kind === 'password-reset' && user.sessionVersion !== record.sessionVersion) throw deadLink();
  return user;
}

/** One refusal for every link that is not live, whatever the reason: nothing to tell apart. */
function deadLink(): GatewayError {
  return new GatewayError(
    'not_found',
    'This link is not valid: it was used already, it expired, or it was never issued.',
  );
}
