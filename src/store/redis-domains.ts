/**
 * The Redis store's tenant domains (see `domains.ts`; layout in
 * `redis-keys.ts`, scripts in `redis-domain-scripts.ts`). A write is answered
 * once a replica has it.
 */
import { MAX_TENANT_DOMAINS, type TenantDomain, type DomainStore } from './domains.js';
import { compareIds, domainTaken, tooManyDomains } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { DOMAIN_TAKEN, TOO_MANY_DOMAINS } from './redis-domain-scripts.js';

/** A record as stored (JSON without the tenant and domain, which are its keys). */
type StoredDomain = Omit<TenantDomain, 'tenantId' | 'domain'>;

function stored(record: TenantDomain): string {
  const { challenge, createdAt, verifiedAt } = record;
  return JSON.stringify({
    challenge,
    createdAt,
    ...(verifiedAt === undefined ? {} : { verifiedAt }),
  });
}

function recordOf(tenantId: string, domain: string, json: string): TenantDomain {
  const { challenge, createdAt, verifiedAt } = JSON.parse(json) as StoredDomain;
  return {
    tenantId,
    domain,
    challenge,
    createdAt,
    ...(verifiedAt === undefined ? {} : { verifiedAt }),
  };
}

/** A script's reply: a record, or a refusal by its number. */
function replied(tenantId: string, domain: string, reply: unknown): TenantDomain | null {
  if (reply === 0) return null;
  if (reply === DOMAIN_TAKEN) throw domainTaken();
  if (reply === TOO_MANY_DOMAINS) throw tooManyDomains(MAX_TENANT_DOMAINS);
  if (typeof reply !== 'string') throw unexpectedReply();
  return recordOf(tenantId, domain, reply);
}

export function redisDomains(context: RedisStoreContext): DomainStore {
  const { redis, keys } = context;
  return {
    addTenantDomain: async (input) => {
      const reply = await attempt(() =>
        redis.addTenantDomain(
          keys.tenant(input.tenantId),
          keys.tenantDomains(input.tenantId),
          keys.verifiedDomains,
          input.tenantId,
          input.domain,
          stored(input),
          input.verifiedAt === undefined ? 0 : 1,
          MAX_TENANT_DOMAINS,
        ),
      );
      const record = replied(input.tenantId, input.domain, reply);
      if (record !== null) await context.replicated(keys.tenantDomains(input.tenantId));
      return record;
    },
    listTenantDomains: async (tenantId) => {
      const all = await attempt(() => redis.hgetall(keys.tenantDomains(tenantId)));
      return Object.entries(all)
        .map(([domain, json]) => recordOf(tenantId, domain, json))
        .sort((a, b) => compareIds(a.domain, b.domain));
    },
    verifyTenantDomain: async (tenantId, domain, at) => {
      const reply = await attempt(() =>
        redis.verifyTenantDomain(
          keys.tenantDomains(tenantId),
          keys.verifiedDomains,
          tenantId,
          domain,
          at,
        ),
      );
      const record = replied(tenantId, domain, reply);
      if (record !== null) await context.replicated(keys.tenantDomains(tenantId));
      return record;
    },
    removeTenantDomain: async (tenantId, domain) => {
      const reply = await attempt(() =>
        redis.removeTenantDomain(
          keys.tenantDomains(tenantId),
          keys.verifiedDomains,
          tenantId,
          domain,
        ),
      );
      if (reply !== 1) return false;
      await context.replicated(keys.tenantDomains(tenantId));
      return true;
    },
    verifiedDomainHolder: async (domain) => attempt(() => redis.hget(keys.verifiedDomains, domain)),
  };
}
