/**
 * The store contract for tenants' identity providers (issue 34): what each
 * backend keeps of an IdP record, that one issuer and client id belong to one
 * tenant at most (one issuer may serve several: issue 42), and that a
 * tenant's removal takes its record and its issuer along.
 * Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { idp, newUser, NOW, orgTenant, rejectionOf } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeIdpContract(current: () => Store): void {
  describe('tenant identity providers', () => {
    it('keeps a record as given, its domains lower-cased, sorted and unique', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const input = idp('acme', {
        clientSecretSealed: 'aXY.Y3Q.dGFn',
        domains: ['Sub.Acme.example', 'acme.example', 'ACME.example'],
        role: 'admin',
        linkExisting: true,
      });
      expect(await store.idps.setTenantIdp(input)).toBe(true);
      expect(await store.idps.getTenantIdp('acme')).toEqual({
        ...input,
        domains: ['acme.example', 'sub.acme.example'],
      });
      expect(await store.idps.tenantIdByClient(input.issuer, input.clientId)).toBe('acme');
    });

    it('keeps a record without a secret without one, and nothing for a tenant without', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.idps.setTenantIdp(idp('acme'));
      const read = await store.idps.getTenantIdp('acme');
      expect(read).toEqual(idp('acme'));
      expect(read).not.toHaveProperty('clientSecretSealed');
      expect(await store.idps.getTenantIdp('globex')).toBeNull();
      expect(
        await store.idps.tenantIdByClient(
          'https://idp.example.com/realms/globex',
          'gateway-globex',
        ),
      ).toBeNull();
    });

    it('refuses a record of a missing or personal tenant, writing nothing', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      expect(await store.idps.setTenantIdp(idp('nowhere'))).toBe(false);
      expect(await store.idps.setTenantIdp(idp(user.personalTenantId))).toBe(false);
      expect(await store.idps.getTenantIdp('nowhere')).toBeNull();
      expect(await store.idps.getTenantIdp(user.personalTenantId)).toBeNull();
      expect(
        await store.idps.tenantIdByClient(idp('nowhere').issuer, 'gateway-nowhere'),
      ).toBeNull();
    });

    it('replaces a record whole: a secret not given again is gone, the issuer index moves', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.idps.setTenantIdp(idp('acme', { clientSecretSealed: 'aXY.Y3Q.dGFn' }));
      const next = idp('acme', { issuer: 'https://login.acme.example', updatedAt: NOW + 5 });
      expect(await store.idps.setTenantIdp(next)).toBe(true);
      const read = await store.idps.getTenantIdp('acme');
      expect(read).toEqual(next);
      expect(read).not.toHaveProperty('clientSecretSealed');
      expect(await store.idps.tenantIdByClient('https://login.acme.example', 'gateway-acme')).toBe(
        'acme',
      );
      expect(await store.idps.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      // The pair given up is free for another tenant.
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      const taken = { issuer: idp('acme').issuer, clientId: 'gateway-acme' };
      expect(await store.idps.setTenantIdp(idp('globex', taken))).toBe(true);
      expect(await store.idps.tenantIdByClient(taken.issuer, taken.clientId)).toBe('globex');
    });

    it("refuses another tenant's issuer and client id with issuer_in_use, writing nothing", async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.idps.setTenantIdp(idp('acme'));
      await store.idps.setTenantIdp(idp('globex'));
      const acmePair = { issuer: idp('acme').issuer, clientId: 'gateway-acme' };
      const err = await rejectionOf(store.idps.setTenantIdp(idp('globex', acmePair)));
      expect(err.code).toBe('issuer_in_use');
      expect(err.status).toBe(409);
      expect(await store.idps.getTenantIdp('globex')).toEqual(idp('globex'));
      expect(await store.idps.tenantIdByClient(acmePair.issuer, acmePair.clientId)).toBe('acme');
      expect(await store.idps.tenantIdByClient(idp('globex').issuer, 'gateway-globex')).toBe(
        'globex',
      );
    });

    it('one issuer serves several tenants, each through a client id of its own (issue 42)', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      const issuer = 'https://accounts.example.com';
      expect(await store.idps.setTenantIdp(idp('acme', { issuer }))).toBe(true);
      expect(await store.idps.setTenantIdp(idp('globex', { issuer }))).toBe(true);
      expect(await store.idps.getTenantIdp('acme')).toEqual(idp('acme', { issuer }));
      expect(await store.idps.getTenantIdp('globex')).toEqual(idp('globex', { issuer }));
      expect(await store.idps.tenantIdByClient(issuer, 'gateway-acme')).toBe('acme');
      expect(await store.idps.tenantIdByClient(issuer, 'gateway-globex')).toBe('globex');
      // Setting its own again, or removing one, leaves the other's alone.
      expect(await store.idps.setTenantIdp(idp('acme', { issuer, updatedAt: NOW + 1 }))).toBe(true);
      expect(await store.idps.removeTenantIdp('globex')).toBe(true);
      expect(await store.idps.tenantIdByClient(issuer, 'gateway-acme')).toBe('acme');
      expect(await store.idps.tenantIdByClient(issuer, 'gateway-globex')).toBeNull();
    });

    it('compares issuers exactly: a trailing slash or a letter case is another issuer', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.tenants.upsertTenant(orgTenant('initech'), NOW);
      const issuer = 'https://idp.example.com/realms/shared';
      const clientId = 'gw';
      await store.idps.setTenantIdp(idp('acme', { issuer, clientId }));
      await store.idps.setTenantIdp(idp('globex', { issuer: `${issuer}/`, clientId }));
      await store.idps.setTenantIdp(idp('initech', { issuer: issuer.toUpperCase(), clientId }));
      expect(await store.idps.tenantIdByClient(issuer, clientId)).toBe('acme');
      expect(await store.idps.tenantIdByClient(`${issuer}/`, clientId)).toBe('globex');
      expect(await store.idps.tenantIdByClient(issuer.toUpperCase(), clientId)).toBe('initech');
      expect(
        await store.idps.tenantIdByClient('https://idp.example.com/realms/Shared', clientId),
      ).toBeNull();
      expect(await store.idps.tenantIdByClient(issuer, 'GW')).toBeNull();
    });

    it('removes a record and its issuer; removing again is false', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.idps.setTenantIdp(idp('acme'));
      expect(await store.idps.removeTenantIdp('acme')).toBe(true);
      expect(await store.idps.getTenantIdp('acme')).toBeNull();
      expect(await store.idps.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      expect(await store.idps.removeTenantIdp('acme')).toBe(false);
      expect(await store.idps.removeTenantIdp('nowhere')).toBe(false);
    });

    it('removing an org tenant removes its record and its issuer, and only its own', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.memberships.addMember('acme', user.id);
      await store.idps.setTenantIdp(idp('acme', { clientSecretSealed: 'aXY.Y3Q.dGFn' }));
      await store.idps.setTenantIdp(idp('globex'));
      expect(await store.tenants.removeOrgTenant('acme')).toEqual([user.id]);
      expect(await store.idps.getTenantIdp('acme')).toBeNull();
      expect(await store.idps.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      expect(await store.idps.getTenantIdp('globex')).toEqual(idp('globex'));
      // A tenant created again under the id has no identity provider.
      await store.tenants.upsertTenant(orgTenant('acme'), NOW + 1);
      expect(await store.idps.getTenantIdp('acme')).toBeNull();
      expect(await store.idps.setTenantIdp(idp('acme'))).toBe(true);
    });
  });
}
