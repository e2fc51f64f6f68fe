/**
 * The Redis key layout. Every key starts with the configured prefix (`tg:`
 * below).
 *
 * Identity directory, all under the one hash tag `{dir}`:
 * - `tg:{dir}:user:<userId>`            hash: the user record
 * - `tg:{dir}:email:<email>`            string: user id, by normalised e-mail
 * - `tg:{dir}:tenant:<tenantId>`        hash: the tenant record
 * - `tg:{dir}:user-tenants:<userId>`    set: tenant ids the user belongs to
 * - `tg:{dir}:tenant-members:<tenantId>` set: user ids of the tenant's members
 * - `tg:{dir}:membership:<tenantId>:<userId>` hash: the membership (`generation`)
 * - `tg:{dir}:generation`               string: the last generation taken
 * - `tg:{dir}:users`                    set: every user id
 * - `tg:{dir}:tenants`                  set: every tenant id
 * - `tg:{dir}:client:<clientId>`        hash: a machine client (its secret's digest only)
 * - `tg:{dir}:tenant-clients:<tenantId>` set: client ids of the tenant
 * - `tg:{dir}:api-key:<keyId>`          hash: an API key (its digest only)
 * - `tg:{dir}:client-keys:<clientId>`   set: key ids of the client
 * - `tg:{dir}:idp:<tenantId>`           hash: the tenant's identity provider (its secret sealed)
 * - `tg:{dir}:idp-clients`              hash: issuer + client id → the tenant whose identity provider has them
 *   (`idp-issuers`, issuer → tenant, before issue 42: rebuilt into it and deleted at start, `redis-idp-index.ts`)
 *
 * - `tg:{dir}:tenant-invitations:<tenantId>` hash: invitation id → its token's digest (swept when listed)
 *
 * The two sets say who is a member (and are what versions before
 * generations read and write); the membership hash says under which
 * generation. Every change of a membership takes the next generation from
 * the one counter, in the same script: the directory shares one slot, so the
 * counter orders every membership change of the store. A membership's role
 * is a field of its hash (`role`; absent before roles: the tenant's creator
 * reads as `admin`, anyone else as `member`). Every change of a client or an
 * API key takes the next generation from the same counter. An identity
 * provider's record and its issuer + client id entry are written together by
 * one script (one pair, one tenant), and go with the tenant's removal.
 *
 * Why one tag: creating a user writes seven of these keys, and membership
 * changes write two sets after checking two hashes. Each such write is one Lua
 * script, and Redis Cluster runs a script only when all its keys live in one
 * slot; a shared tag puts them there. The directory is small and rarely
 * written, so one slot holding it costs nothing.
 *
 * Browser sign-in, one key per one-time record (a pending sign-in by its
 * `state`, a gateway code by its SHA-256), expiring with it, taken by GETDEL;
 * and the IdP-side logouts' records (a logout token's `jti` seen, added by
 * SET NX; the user an IdP's `sub` or `sid` names), expiring likewise:
 * - `tg:sso:<kind>:{<key>}`            string: the record (JSON or a user id)
 *
 * Deny-list, one key per revoked token:
 * - `tg:revoked:{<jti>}`                string, expiring at the token's `exp`
 *
 * Why spread: these keys are written on every logout and read on every
 * request, and each is touched alone, so a tag per token id spreads that load
 * over every slot of a cluster instead of piling it onto the directory's.
 *
 * Revocation leases (`revocation.mode: lease`), under the tag `{leases}`:
 * - `tg:{leases}:holders`               sorted set: instance id → lease end (Redis ms)
 * - `tg:{leases}:acks:<confirmationId>` set: instance ids that applied a revocation
 *
 * One tag, because a confirmation's scripts read the holders and the
 * acknowledgements together; they are written a few times a second per
 * instance, never per request.
 *
 * Refresh-token families (issue 33; `redis-refresh.ts`):
 * - `tg:refresh:{<familyId>}`          string: the family as JSON, expiring by itself
 *                                       (`refreshRecordExpiry`: its end, or its last access token's)
 * - `tg:refresh-user:{<userId>}`       sorted set: the user's live families, each as
 *                                       `<familyId>@<tenantId>` → absolute end (a family id
 *                                       alone: written before issue 42, of no tenant)
 *
 * Why a tag per family: a rotation is one script over one key, made on every
 * refresh, so families spread over every slot like the deny-list. The user's
 * index has a tag of its own (so it is in the family's slot only by chance):
 * it is advisory — written after the family, trimmed of ended families on
 * each login, cleaned of revoked ones after the revocation; a family that
 * outlives a failed index write is still bound by its record's own expiry,
 * and by the session version and membership generation it carries.
 *
 * Browser sessions (issue 44; `redis-browser-sessions.ts`):
 * - `tg:invitation:{<tokenDigest>}`  string: a pending invitation as JSON, expiring with it, taken by GETDEL
 * - `tg:browser-session:{<sessionId>}` string: the session as JSON (its secret as a digest only),
 *                                       expiring at its absolute end
 * - `tg:browser-sessions:{<userId>}`   sorted set: the user's session ids → absolute end,
 *                                       expiring with the last of them
 *
 * Why a tag per session: a session is read alone (by the instance that has
 * not seen it yet) and touched alone in the background, so sessions spread
 * over every slot like the deny-list. The index is in a slot of its own and
 * advisory, as the refresh index is: written after the record, pruned of
 * ended and removed sessions when listed; a session missing from it is
 * still ended by its id (the deny-list) and its record's own expiry.
 *
 * Audit streams (`audit-log.ts`), one Redis Stream each, untagged (each is
 * written alone, so they spread over the slots like the deny-list):
 * - `tg:audit:users`                    user-level events
 * - `tg:audit:tenant:<tenantId>`        the events of one tenant
 */

/** The tag that pins the identity directory to one cluster slot. */
export const DIRECTORY_TAG = '{dir}';

/** Key builders for one prefix. */
export interface RedisKeys {
  readonly prefix: string;
  user(userId: string): string;
  email(normalisedEmail: string): string;
  tenant(tenantId: string): string;
  userTenants(userId: string): string;
  tenantMembers(tenantId: string): string;
  /** Tenant ids never hold a `:` (DNS labels, UUIDs), so the pair is unambiguous. */
  membership(tenantId: string, userId: string): string;
  readonly generation: string;
  client(clientId: string): string;
  tenantClients(tenantId: string): string;
  apiKey(keyId: string): string;
  clientKeys(clientId: string): string;
  idp(tenantId: string): string;
  /** Issuer + client id (`idpClientKey`) → the tenant whose IdP record has them. */
  readonly idpClients: string;
  /** The issuer → tenant index of versions before issue 42: deleted at start. */
  readonly idpIssuersBefore: string;
  tenantDomains(tenantId: string): string;
  readonly verifiedDomains: string;
  readonly users: string;
  readonly tenants: string;
  revoked(jti: string): string;
  ssoRecord(kind: string, key: string): string;
  readonly leaseHolders: string;
  leaseAcks(confirmationId: string): string;
  refreshFamily(familyId: string): string;
  refreshFamiliesOf(userId: string): string;
  browserSession(sessionId: string): string;
  browserSessionsOf(userId: string): string;
  /** An invitation by its token's digest (issue 45). */
  invitation(tokenDigest: string): string;
  /** A tenant's pending invitations: id → token digest. */
  tenantInvitations(tenantId: string): string;
  /** The Redis Stream of an audit stream (`users`, `tenant:<id>`); `audit('')` is their common start. */
  audit(stream: string): string;
  /** Pub/sub channel of session events (a channel, not a key: no slot). */
  readonly sessionChannel: string;
}

/**
 * Builds the key layout for `prefix`.
 * @throws RangeError when the prefix holds `{` or `}`: Redis hashes the first
 * `{…}` of a key, so a braced prefix would override the tags above.
 */
export function createRedisKeys(prefix: string): RedisKeys {
  if (/[{}]/.test(prefix)) {
    throw new RangeError('The Redis key prefix must not contain "{" or "}".');
  }
  const dir = `${prefix}${DIRECTORY_TAG}:`;
  return {
    prefix,
    user: (userId) => `${dir}user:${userId}`,
    email: (normalisedEmail) => `${dir}email:${normalisedEmail}`,
    tenant: (tenantId) => `${dir}tenant:${tenantId}`,
    userTenants: (userId) => `${dir}user-tenants:${userId}`,
    tenantMembers: (tenantId) => `${dir}tenant-members:${tenantId}`,
    membership: (tenantId, userId) => `${dir}membership:${tenantId}:${userId}`,
    generation: `${dir}generation`,
    client: (clientId) => `${dir}client:${clientId}`,
    tenantClients: (tenantId) => `${dir}tenant-clients:${tenantId}`,
    apiKey: (keyId) => `${dir}api-key:${keyId}`,
    clientKeys: (clientId) => `${dir}client-keys:${clientId}`,
    idp: (tenantId) => `${dir}idp:${tenantId}`,
    idpClients: `${dir}idp-clients`,
    idpIssuersBefore: `${dir}idp-issuers`,
    tenantDomains: (tenantId) => `${dir}tenant-domains:${tenantId}`,
    verifiedDomains: `${dir}verified-domains`,
    users: `${dir}users`,
    tenants: `${dir}tenants`,
    revoked: (jti) => `${prefix}revoked:{${jti}}`,
    ssoRecord: (kind, key) => `${prefix}sso:${kind}:{${key}}`,
    leaseHolders: `${prefix}{leases}:holders`,
    leaseAcks: (confirmationId) => `${prefix}{leases}:acks:${confirmationId}`,
    refreshFamily: (familyId) => `${prefix}refresh:{${familyId}}`,
    refreshFamiliesOf: (userId) => `${prefix}refresh-user:{${userId}}`,
    browserSession: (sessionId) => `${prefix}browser-session:{${sessionId}}`,
    browserSessionsOf: (userId) => `${prefix}browser-sessions:{${userId}}`,
    invitation: (tokenDigest) => `${prefix}invitation:{${tokenDigest}}`,
    tenantInvitations: (tenantId) => `${dir}tenant-invitations:${tenantId}`,
    audit: (stream) => `${prefix}audit:${stream}`,
    sessionChannel: `${prefix}sessions`,
  };
}
