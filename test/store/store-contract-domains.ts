/**
 * The store contract for tenants' e-mail domains (issue 42): a domain is
 * claimed once per tenant (the claim answered as it is after that), verified
 * by one tenant at most — also when two tenants race — and removed with its
 * verification, or with its tenant. Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TENANT_DOMAINS } from '../../src/store/domains.js';
import type { Store, TenantDomain } from '../../src/store/types.js';
import { newUser, NOW, orgTenant, rejectionOf } from './store-fixtures.js';

function claim(tenantId: string, domain: string, verifiedAt?: number): TenantDomain {
  return {
    tenantId,
    domain,
    challenge: `challenge-${tenantId}-${domain}`,
    createdAt: NOW,
    ...(verifiedAt === undefined ? {} : { verifiedAt }),
  };
}

/** @param current the store of the running test (a fresh one each). */
export function describeDomainContract(current: () => Store): void {
  describe('tenant e-mail domains', () => {
    it('adds a domain unverified, answers the same record when added again, lists by name', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      expect(await store.domains.addTenantDomain(claim('acme', 'acme.example'))).toEqual(
        claim('acme', 'acme.example'),
      );
      const again = { ...claim('acme', 'acme.example'), challenge: 'another', createdAt: NOW + 5 };
      expect(await store.domains.addTenantDomain(again)).toEqual(claim('acme', 'acme.example'));
      await store.domains.addTenantDomain(claim('acme', 'a.example'));
      expect((await store.domains.listTenantDomains('acme')).map((d) => d.domain)).toEqual([
        'a.example',
        'acme.example',
      ]);
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBeNull();
      expect(await store.domains.listTenantDomains('globex')).toEqual([]);
    });

    it('adds nothing for a personal or missing tenant', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      expect(
        await store.domains.addTenantDomain(claim(user.personalTenantId, 'x.example')),
      ).toBeNull();
      expect(await store.domains.addTenantDomain(claim('nowhere', 'x.example'))).toBeNull();
      expect(await store.domains.listTenantDomains('nowhere')).toEqual([]);
    });

    it('verifies a domain once (its first time kept); a domain it lacks is null', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.domains.addTenantDomain(claim('acme', 'acme.example'));
      const verified = { ...claim('acme', 'acme.example'), verifiedAt: NOW + 10 };
      expect(await store.domains.verifyTenantDomain('acme', 'acme.example', NOW + 10)).toEqual(
        verified,
      );
      expect(await store.domains.verifyTenantDomain('acme', 'acme.example', NOW + 20)).toEqual(
        verified,
      );
      expect(await store.domains.listTenantDomains('acme')).toEqual([verified]);
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBe('acme');
      expect(await store.domains.verifyTenantDomain('acme', 'other.example', NOW)).toBeNull();
      expect(await store.domains.verifyTenantDomain('globex', 'acme.example', NOW)).toBeNull();
    });

    it('a verified domain belongs to one tenant: verifying or adding it elsewhere is domain_taken', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.domains.addTenantDomain(claim('globex', 'acme.example'));
      await store.domains.addTenantDomain(claim('acme', 'acme.example', NOW));
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBe('acme');
      const verify = await rejectionOf(
        store.domains.verifyTenantDomain('globex', 'acme.example', NOW),
      );
      expect([verify.code, verify.status]).toEqual(['domain_taken', 409]);
      await store.tenants.upsertTenant(orgTenant('initech'), NOW);
      const add = await rejectionOf(
        store.domains.addTenantDomain(claim('initech', 'acme.example', NOW)),
      );
      expect(add.code).toBe('domain_taken');
      expect(await store.domains.listTenantDomains('initech')).toEqual([]);
      expect((await store.domains.listTenantDomains('globex'))[0]?.verifiedAt).toBeUndefined();
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBe('acme');
    });

    it('of two tenants verifying one domain at once, exactly one wins', async () => {
      const store = current();
      const tenants = ['t1', 't2', 't3', 't4'];
      for (const id of tenants) {
        await store.tenants.upsertTenant(orgTenant(id), NOW);
        await store.domains.addTenantDomain(claim(id, 'shared.example'));
      }
      const outcomes = await Promise.allSettled(
        tenants.map((id) => store.domains.verifyTenantDomain(id, 'shared.example', NOW)),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const lost of outcomes.filter((o) => o.status === 'rejected'))
        expect((lost as PromiseRejectedResult).reason.code).toBe('domain_taken');
      const holder = await store.domains.verifiedDomainHolder('shared.example');
      expect((won[0] as PromiseFulfilledResult<TenantDomain>).value.tenantId).toBe(holder);
    });

    it('removes a domain and its verification (another tenant may verify it then)', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.domains.addTenantDomain(claim('globex', 'acme.example'));
      await store.domains.addTenantDomain(claim('acme', 'acme.example', NOW));
      expect(await store.domains.removeTenantDomain('globex', 'acme.example')).toBe(true);
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBe('acme');
      expect(await store.domains.removeTenantDomain('acme', 'acme.example')).toBe(true);
      expect(await store.domains.removeTenantDomain('acme', 'acme.example')).toBe(false);
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBeNull();
      await store.domains.addTenantDomain(claim('globex', 'acme.example'));
      expect(
        (await store.domains.verifyTenantDomain('globex', 'acme.example', NOW))?.verifiedAt,
      ).toBe(NOW);
    });

    it(`holds at most ${MAX_TENANT_DOMAINS} domains a tenant`, async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      for (let i = 0; i < MAX_TENANT_DOMAINS; i += 1)
        await store.domains.addTenantDomain(claim('acme', `d${i}.example`));
      const err = await rejectionOf(
        store.domains.addTenantDomain(claim('acme', 'one-more.example')),
      );
      expect(err.code).toBe('invalid_request');
      // One it has is still answered.
      expect((await store.domains.addTenantDomain(claim('acme', 'd0.example')))?.domain).toBe(
        'd0.example',
      );
    });

    it('removing an org tenant removes its domains and their verifications, and only its own', async () => {
      const store = current();
      await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.domains.addTenantDomain(claim('globex', 'acme.example'));
      await store.domains.addTenantDomain(claim('acme', 'acme.example', NOW));
      await store.domains.addTenantDomain(claim('acme', 'pending.example'));
      await store.domains.addTenantDomain(claim('globex', 'globex.example', NOW));
      expect(await store.tenants.removeOrgTenant('acme')).toEqual([]);
      expect(await store.domains.verifiedDomainHolder('acme.example')).toBeNull();
      expect(await store.domains.verifiedDomainHolder('globex.example')).toBe('globex');
      expect((await store.domains.listTenantDomains('globex')).map((d) => d.domain)).toEqual([
        'acme.example',
        'globex.example',
      ]);
      // A tenant created again under the id has no domains.
      await store.tenants.upsertTenant(orgTenant('acme'), NOW + 1);
      expect(await store.domains.listTenantDomains('acme')).toEqual([]);
    });
  });
}
