/**
 * The token exchange (RFC 8693) of a tenant's provider's ID token for a
 * gateway token of that tenant. The tenant named in the request decides
 * everything: its provider record, hence the one issuer whose keys may verify
 * the token (chosen by `iss` — never keys of another issuer tried in turn), the
 * client id its `aud` must name, the allowed e-mail domains (those of the
 * record that the tenant has verified now: `tenant-domains.ts`), the role of a
 * user created or joined. Then the user, found by the verified e-mail:
 *
 * - none: created without a password, marked as this provider's, and made a
 *   member with the provider's role;
 * - a member of the tenant: signed in as they are (their role kept);
 * - not a member: joined with the provider's role only when the record allows
 *   linking local users (`linkExisting`) or this provider created them; else
 *   refused (`not_linked`), as is a local user whose address is not verified
 *   (issue 45); a linked user's local password is ended, and with
 *   it every token of theirs (`managed-addresses.ts`);
 * - disabled: refused.
 *
 * The token comes from the normal issuance path (`Accounts.grantToken`): the
 * member's role's scopes, the membership's generation, the session version.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { isGatewayError } from '../../errors.js';
import type { Store, TenantIdp, UserRecord } from '../../store/types.js';
import type { Accounts, GrantedToken } from '../accounts.js';
import { isDisabledHash } from '../revocation/disabled.js';
import { endLocalPassword } from './managed-addresses.js';
import { NO_PASSWORD } from '../passwords/no-password.js';
import { isDomainVerifiedFor } from './tenant-domains.js';
import type { IssuerKeys } from './issuer-keys.js';
import { providerUnavailable, refused } from './refusals.js';
import { ID_TOKEN_ALGORITHMS, verifyIdToken, type Seen } from './verify-id-token.js';

export type ExchangeOutcome = 'signed_in' | 'user_created' | 'member_joined';

export interface ExchangeResult {
  /** A local user this provider did not create, joined because the record links existing users. */
  linked: boolean;
  /** The linked user's local password was ended. */
  passwordEnded: boolean;
  /** With `refreshToken` when the caller's `grant` began a refresh family. */
  granted: GrantedToken & { refreshToken?: string };
  outcome: ExchangeOutcome;
  idp: TenantIdp;
  /** The provider's `sub` of the user. */
  subject: string;
}

/** What the exchange learnt before it refused: for the audit event of the refusal. */
export interface ExchangeSeen extends Seen {
  /** The token's `iss` once it is the tenant's provider's (never an arbitrary claimed one). */
  issuer?: string;
}

export type ExchangeToken = (
  input: {
    subjectToken: string;
    tenantId: string;
    /**
     * How the token is issued (a refresh family begun with it, when
     * `tokens.refresh.enabled`); the normal path by default.
     */
    grant?: (user: UserRecord, tenantId: string) => Promise<ExchangeResult['granted']>;
  },
  seen?: ExchangeSeen,
) => Promise<ExchangeResult>;

/** What {@link memberFor} needs. */
export type MemberDeps = Pick<TokenExchangeDeps, 'store' | 'accounts'>;

export interface TokenExchangeDeps {
  store: Store;
  accounts: Accounts;
  keys: IssuerKeys;
  /** `tokens.clockSkewSeconds`: the same tolerance as for the gateway's own tokens. */
  clockSkewSeconds: number;
}

export function createTokenExchange(deps: TokenExchangeDeps): ExchangeToken {
  return async ({ subjectToken, tenantId, grant = deps.accounts.grantToken }, seen = {}) => {
    const claimedIssuer = issuerOf(subjectToken);
    const idp = await deps.store.idps.getTenantIdp(tenantId);
    if (idp === null || idp.issuer !== claimedIssuer)
      throw refused(await issuerRefusal(deps.store, idp, subjectToken, claimedIssuer));
    seen.issuer = idp.issuer;
    let keys;
    try {
      keys = await deps.keys.keysFor(idp.issuer);
    } catch (err) {
      throw providerUnavailable(err);
    }
    const identity = await verifyIdToken(subjectToken, idp, keys, deps.clockSkewSeconds, seen);
    const { user, outcome, linked, passwordEnded } = await memberFor(deps, idp, identity.email);
    const granted = await grant(user, tenantId);
    return { granted, outcome, linked, passwordEnded, idp, subject: identity.subject };
  };
}

/**
 * The unverified `iss` (a string), checked against the tenant's record before
 * any key is fetched; `alg` (and `typ`) checked here too, so `none` or HS256
 * costs no fetch.
 */
export function issuerOf(token: string): string {
  let iss: unknown;
  let header;
  try {
    iss = decodeJwt(token).iss;
    header = decodeProtectedHeader(token);
  } catch (err) {
    throw refused('malformed', err);
  }
  if (typeof iss !== 'string') throw refused('malformed');
  if (!(ID_TOKEN_ALGORITHMS as readonly unknown[]).includes(header.alg)) throw refused('algorithm');
  // RFC 9068 §4: an access token (`typ: at+jwt`) is not an ID token.
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
  if (typ === 'at+jwt' || typ === 'application/at+jwt') throw refused('algorithm');
  return iss;
}

/**
 * Why the issuer does not fit the tenant (for the log and audit only): the
 * token's unverified `iss` and `azp` (else first `aud`) are another tenant's
 * provider, or none's.
 */
async function issuerRefusal(
  store: Store,
  idp: TenantIdp | null,
  token: string,
  issuer: string,
): Promise<'no_provider' | 'foreign_issuer' | 'unknown_issuer'> {
  if (idp === null) return 'no_provider';
  const { aud, azp } = decodeJwt(token);
  const client = typeof azp === 'string' ? azp : Array.isArray(aud) ? aud[0] : aud;
  if (typeof client !== 'string') return 'unknown_issuer';
  return (await store.idps.tenantIdByClient(issuer, client)) === null
    ? 'unknown_issuer'
    : 'foreign_issuer';
}

/** The user an ID token names, and how they became the tenant's member. */
export interface Membership {
  user: UserRecord;
  outcome: ExchangeOutcome;
  /** A local user this provider did not create, joined by the record's `linkExisting`. */
  linked: boolean;
  /** The linked user's local password was ended (`managed-addresses.ts`). */
  passwordEnded: boolean;
}

/** The user the verified e-mail names, created or joined as the file header says. */
export async function memberFor(
  deps: MemberDeps,
  idp: TenantIdp,
  email: string,
): Promise<Membership> {
  const { store } = deps;
  // Issue 42: whatever the record lists, only a domain the tenant has verified now.
  if (!(await isDomainVerifiedFor(store, idp.tenantId, email))) throw refused('domain_not_allowed');
  let user = await store.users.findUserByEmail(email);
  let outcome: ExchangeOutcome = 'signed_in';
  if (user === null) ({ user, outcome } = await createFederatedUser(deps, idp, email));
  if (isDisabledHash(user.passwordHash)) throw refused('user_disabled');
  if (await store.memberships.isMember(idp.tenantId, user.id))
    return { user, outcome, linked: false, passwordEnded: false };
  const ownUser =
    user.createdByIdp?.tenantId === idp.tenantId && user.createdByIdp.issuer === idp.issuer;
  if (!ownUser && !idp.linkExisting) throw refused('not_linked');
  // Issue 45: an address nobody proved to receive mail at (anyone may sign up as
  // `ceo@bigcorp.example`) is never attached to a provider's person.
  if (!ownUser && user.emailVerifiedAt === undefined) throw refused('not_linked');
  // Issue 42: a linked address's password (a squatter's, maybe) is no way in any more; ended
  // before the membership, so a failure leaves no member reachable by that password.
  let passwordEnded = false;
  if (!ownUser) ({ user, passwordEnded } = await endLocalPassword(store, user));
  if (!(await store.memberships.addMember(idp.tenantId, user.id, idp.role)))
    throw refused('no_provider');
  return {
    user,
    outcome: outcome === 'user_created' ? outcome : 'member_joined',
    linked: !ownUser,
    passwordEnded,
  };
}

/** A new user without a password; a concurrent first sign-in may have created them first. */
async function createFederatedUser(
  deps: MemberDeps,
  idp: TenantIdp,
  email: string,
): Promise<{ user: UserRecord; outcome: ExchangeOutcome }> {
  try {
    const user = await deps.accounts.signUp({
      email,
      passwordHash: NO_PASSWORD,
      createdByIdp: { tenantId: idp.tenantId, issuer: idp.issuer },
      // The provider vouched `email_verified` (`verify-id-token.ts`).
      emailVerified: true,
    });
    return { user, outcome: 'user_created' };
  } catch (err) {
    // An address the provider verified that the gateway's own rules refuse (length, Basic's alphabet).
    if (isGatewayError(err) && err.code === 'invalid_request') throw refused('claims', err);
    if (!isGatewayError(err) || err.code !== 'user_exists') throw err;
    const user = await deps.store.users.findUserByEmail(email);
    if (user === null) throw err;
    return { user, outcome: 'signed_in' };
  }
}
