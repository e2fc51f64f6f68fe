/**
 * How records sit in Redis hashes: one field per property, numbers as decimal
 * strings, an absent optional property as an absent field. Field names are
 * shared with the Lua scripts (`redis-scripts.ts`).
 */
import { GatewayError } from '../errors.js';
import type {
  ApiKeyRecord,
  ClientRecord,
  MembershipState,
  TenantIdp,
  TenantInput,
  TenantRecord,
  TenantType,
  UserRecord,
} from './types.js';

/** A Redis hash as ioredis returns it; empty when the key does not exist. */
export type RedisHash = Record<string, string>;

/** HSET arguments (field, value, …) for a user; fields are listed, never copied blindly. */
export function userHashArguments(user: UserRecord): string[] {
  return hashArguments({
    id: user.id,
    email: user.email,
    name: user.name,
    passwordHash: user.passwordHash,
    sessionVersion: user.sessionVersion,
    personalTenantId: user.personalTenantId,
    createdAt: user.createdAt,
    idpTenantId: user.createdByIdp?.tenantId,
    idpIssuer: user.createdByIdp?.issuer,
    emailVerifiedAt: user.emailVerifiedAt,
  });
}

/** HSET arguments for a whole tenant record. */
export function tenantHashArguments(tenant: TenantRecord): string[] {
  return hashArguments({
    ...tenantInputFields(tenant),
    createdAt: tenant.createdAt,
    modifiedAt: tenant.modifiedAt,
  });
}

/** HSET arguments for the fields of a tenant an upsert sets. */
export function tenantInputHashArguments(tenant: TenantInput): string[] {
  return hashArguments(tenantInputFields(tenant));
}

/** Parses a numeric field read on its own (HGET). */
export function numberFromField(value: string, kind: string): number {
  const parsed = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(parsed)) throw malformed(kind);
  return parsed;
}

/** Pairs up a flat field/value reply (HGETALL inside a script). */
export function hashFromReply(reply: unknown): RedisHash {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) {
    throw malformed('reply');
  }
  const hash: RedisHash = {};
  for (let i = 0; i < reply.length; i += 2) {
    hash[String(reply[i])] = String(reply[i + 1]);
  }
  return hash;
}

/** null for an empty hash (no such user). */
export function userFromHash(hash: RedisHash): UserRecord | null {
  if (Object.keys(hash).length === 0) return null;
  const user: UserRecord = {
    id: text(hash, 'id', 'user'),
    email: text(hash, 'email', 'user'),
    passwordHash: text(hash, 'passwordHash', 'user'),
    sessionVersion: number(hash, 'sessionVersion', 'user'),
    personalTenantId: text(hash, 'personalTenantId', 'user'),
    createdAt: number(hash, 'createdAt', 'user'),
  };
  if (hash['name'] !== undefined) user.name = hash['name'];
  const idpTenantId = hash['idpTenantId'];
  const idpIssuer = hash['idpIssuer'];
  if (idpTenantId !== undefined && idpIssuer !== undefined)
    user.createdByIdp = { tenantId: idpTenantId, issuer: idpIssuer };
  if (hash['emailVerifiedAt'] !== undefined)
    user.emailVerifiedAt = number(hash, 'emailVerifiedAt', 'user');
  return user;
}

/** null for an empty hash (no such tenant). */
export function tenantFromHash(hash: RedisHash): TenantRecord | null {
  if (Object.keys(hash).length === 0) return null;
  return {
    tenantId: text(hash, 'tenantId', 'tenant'),
    type: tenantType(text(hash, 'type', 'tenant')),
    name: text(hash, 'name', 'tenant'),
    createdAt: number(hash, 'createdAt', 'tenant'),
    modifiedAt: number(hash, 'modifiedAt', 'tenant'),
    cloudRegion: text(hash, 'cloudRegion', 'tenant'),
    createdBy: text(hash, 'createdBy', 'tenant'),
  };
}

/**
 * The `readMembership` script's reply: whether a member, the membership's
 * generation (null when none) and the generation counter (0 before any).
 */
export function membershipStateFromReply(reply: unknown): MembershipState {
  if (!Array.isArray(reply) || reply.length !== 3) throw malformed('reply');
  const [member, generation, asOf] = reply as unknown[];
  const state: MembershipState = {
    membership: null,
    asOf: numberFromField(String(asOf), 'membership'),
  };
  // A member without a generation joined under an earlier version: no token carries one for it.
  if (member === 1 && generation !== null) {
    state.membership = { generation: numberFromField(String(generation), 'membership') };
  }
  return state;
}

/**
 * HSET arguments for a client but its generation (the script takes that).
 * Scopes are one field, space-separated, as OAuth writes them (a scope never
 * holds a space).
 */
export function clientHashArguments(client: Omit<ClientRecord, 'generation'>): string[] {
  return hashArguments({
    clientId: client.clientId,
    tenantId: client.tenantId,
    name: client.name,
    scopes: client.scopes.join(' '),
    secretDigest: client.secretDigest,
    createdAt: client.createdAt,
    expiresAt: client.expiresAt,
    rotatedAt: client.rotatedAt,
    createdBy: client.createdBy,
  });
}

/** null for an empty hash (no such client). */
export function clientFromHash(hash: RedisHash): ClientRecord | null {
  if (Object.keys(hash).length === 0) return null;
  const scopes = text(hash, 'scopes', 'client');
  return {
    clientId: text(hash, 'clientId', 'client'),
    tenantId: text(hash, 'tenantId', 'client'),
    name: text(hash, 'name', 'client'),
    scopes: scopes === '' ? [] : scopes.split(' '),
    secretDigest: text(hash, 'secretDigest', 'client'),
    generation: number(hash, 'generation', 'client'),
    createdAt: number(hash, 'createdAt', 'client'),
    ...optionalNumber(hash, 'expiresAt', 'client'),
    ...optionalNumber(hash, 'rotatedAt', 'client'),
    ...clientMaker(hash),
  };
}

/** HSET arguments for an API key but its tenant and generation (the script takes those). */
export function apiKeyHashArguments(
  key: Omit<ApiKeyRecord, 'tenantId' | 'generation' | 'lastUsedAt'>,
): string[] {
  return hashArguments({
    keyId: key.keyId,
    clientId: key.clientId,
    digest: key.digest,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
  });
}

/** null for an empty hash (no such key). */
export function apiKeyFromHash(hash: RedisHash): ApiKeyRecord | null {
  if (Object.keys(hash).length === 0) return null;
  return {
    keyId: text(hash, 'keyId', 'API key'),
    clientId: text(hash, 'clientId', 'API key'),
    tenantId: text(hash, 'tenantId', 'API key'),
    digest: text(hash, 'digest', 'API key'),
    generation: number(hash, 'generation', 'API key'),
    createdAt: number(hash, 'createdAt', 'API key'),
    ...optionalNumber(hash, 'expiresAt', 'API key'),
    ...optionalNumber(hash, 'lastUsedAt', 'API key'),
  };
}

/**
 * HSET arguments for a tenant's identity provider. Domains are one field,
 * space-separated (a DNS name never holds a space); the flag is `1` or `0`.
 */
export function idpHashArguments(idp: TenantIdp): string[] {
  return hashArguments({
    tenantId: idp.tenantId,
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecretSealed: idp.clientSecretSealed,
    domains: idp.domains.join(' '),
    role: idp.role,
    linkExisting: idp.linkExisting ? '1' : '0',
    updatedAt: idp.updatedAt,
  });
}

/** null for an empty hash (no identity provider). */
export function idpFromHash(hash: RedisHash): TenantIdp | null {
  if (Object.keys(hash).length === 0) return null;
  const kind = 'identity provider';
  const domains = text(hash, 'domains', kind);
  const role = text(hash, 'role', kind);
  if (role !== 'admin' && role !== 'member') throw malformed(kind);
  const idp: TenantIdp = {
    tenantId: text(hash, 'tenantId', kind),
    issuer: text(hash, 'issuer', kind),
    clientId: text(hash, 'clientId', kind),
    domains: domains === '' ? [] : domains.split(' '),
    role,
    linkExisting: text(hash, 'linkExisting', kind) === '1',
    updatedAt: number(hash, 'updatedAt', kind),
  };
  const sealed = hash['clientSecretSealed'];
  if (sealed !== undefined) idp.clientSecretSealed = sealed;
  return idp;
}

/** A client's `createdBy`, when recorded (clients made before have none). */
function clientMaker(hash: RedisHash): Pick<ClientRecord, 'createdBy'> {
  const maker = hash['createdBy'];
  if (maker === undefined) return {};
  if (maker !== 'admin' && maker !== 'operator') throw malformed('client');
  return { createdBy: maker };
}

function optionalNumber(hash: RedisHash, field: string, kind: string): Record<string, number> {
  return hash[field] === undefined ? {} : { [field]: number(hash, field, kind) };
}

function tenantInputFields(tenant: TenantInput): Record<string, string> {
  return {
    tenantId: tenant.tenantId,
    type: tenant.type,
    name: tenant.name,
    cloudRegion: tenant.cloudRegion,
    createdBy: tenant.createdBy,
  };
}

function hashArguments(fields: Record<string, string | number | undefined>): string[] {
  return Object.entries(fields).flatMap(([field, value]) =>
    value === undefined ? [] : [field, String(value)],
  );
}

function text(hash: RedisHash, field: string, kind: string): string {
  const value = hash[field];
  if (value === undefined) throw malformed(kind);
  return value;
}

function number(hash: RedisHash, field: string, kind: string): number {
  return numberFromField(text(hash, field, kind), kind);
}

function tenantType(value: string): TenantType {
  if (value !== 'usertenant' && value !== 'orgtenant') throw malformed('tenant');
  return value;
}

// Only a hand edit or a foreign writer under our prefix gets here; the message
// names the kind of record, never its content.
function malformed(kind: string): GatewayError {
  return new GatewayError('internal_error', `The store holds a malformed ${kind} record.`);
}
