/**
 * The store contract for tenants' identity providers (issue 34): what each
 * backend keeps of an IdP record, that one issuer and client id belong to one
 * tenant at most (one issuer may serve several: issue 42), and that a
 * tenant's removal takes its record and its issuer along.
 * Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { Store, TenantIdp } from '../../src/store/types.js';
import { newUser, NOW, orgTenant } from './store-fixtures.js';

function idp(tenantId: string, overrides: Partial<TenantIdp> = {}): TenantIdp {
  return {
    tenantId,
    issuer: `https://idp.example.com/realms/${tenantId}`,
    clientId: `gateway-${tenantId}`,
    domains: [`${tenantId}.example.com`],
    role: 'member',
    linkExisting: false,
    updatedAt: NOW,
    ...overrides,
  };
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const err = await promise.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

/** @param current the store of the running test (a fresh one each). */
export function describeIdpContract(current: () => Store): void {
  describe('tenant identity providers', () => {
    it('keeps a record as given, its domains lower-cased, sorted and unique', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      const input = idp('acme', {
        clientSecretSealed: 'aXY.Y3Q.dGFn',
        domains: ['Sub.Acme.example', 'acme.example', 'ACME.example'],
        role: 'admin',
        linkExisting: true,
      });
      expect(await store.setTenantIdp(input)).toBe(true);
      expect(await store.getTenantIdp('acme')).toEqual({
        ...input,
        domains: ['acme.example', 'sub.acme.example'],
      });
      expect(await store.tenantIdByClient(input.issuer, input.clientId)).toBe('acme');
    });

    it('keeps a record without a secret without one, and nothing for a tenant without', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.upsertTenant(orgTenant('globex'), NOW);
      await store.setTenantIdp(idp('acme'));
      const read = await store.getTenantIdp('acme');
      expect(read).toEqual(idp('acme'));
      expect(read).not.toHaveProperty('clientSecretSealed');
      expect(await store.getTenantIdp('globex')).toBeNull();
      expect(
        await store.tenantIdByClient('https://idp.example.com/realms/globex', 'gateway-globex'),
      ).toBeNull();
    });

    it('refuses a record of a missing or personal tenant, writing nothing', async () => {
      const store = current();
      const user = await store.createUser(newUser());
      expect(await store.setTenantIdp(idp('nowhere'))).toBe(false);
      expect(await store.setTenantIdp(idp(user.personalTenantId))).toBe(false);
      expect(await store.getTenantIdp('nowhere')).toBeNull();
      expect(await store.getTenantIdp(user.personalTenantId)).toBeNull();
      expect(await store.tenantIdByClient(idp('nowhere').issuer, 'gateway-nowhere')).toBeNull();
    });

    it('replaces a record whole: a secret not given again is gone, the issuer index moves', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.setTenantIdp(idp('acme', { clientSecretSealed: 'aXY.Y3Q.dGFn' }));
      const next = idp('acme', { issuer: 'https://login.acme.example', updatedAt: NOW + 5 });
      expect(await store.setTenantIdp(next)).toBe(true);
      const read = await store.getTenantIdp('acme');
      expect(read).toEqual(next);
      expect(read).not.toHaveProperty('clientSecretSealed');
      expect(await store.tenantIdByClient('https://login.acme.example', 'gateway-acme')).toBe(
        'acme',
      );
      expect(await store.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      // The pair given up is free for another tenant.
      await store.upsertTenant(orgTenant('globex'), NOW);
      const taken = { issuer: idp('acme').issuer, clientId: 'gateway-acme' };
      expect(await store.setTenantIdp(idp('globex', taken))).toBe(true);
      expect(await store.tenantIdByClient(taken.issuer, taken.clientId)).toBe('globex');
    });

    it("refuses another tenant's issuer and client id with issuer_in_use, writing nothing", async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.upsertTenant(orgTenant('globex'), NOW);
      await store.setTenantIdp(idp('acme'));
      await store.setTenantIdp(idp('globex'));
      const acmePair = { issuer: idp('acme').issuer, clientId: 'gateway-acme' };
      const err = await refusal(store.setTenantIdp(idp('globex', acmePair)));
      expect(err.code).toBe('issuer_in_use');
      expect(err.status).toBe(409);
      expect(await store.getTenantIdp('globex')).toEqual(idp('globex'));
      expect(await store.tenantIdByClient(acmePair.issuer, acmePair.clientId)).toBe('acme');
      expect(await store.tenantIdByClient(idp('globex').issuer, 'gateway-globex')).toBe('globex');
    });

    it('one issuer serves several tenants, each through a client id of its own (issue 42)', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.upsertTenant(orgTenant('globex'), NOW);
      const issuer = 'https://accounts.example.com';
      expect(await store.setTenantIdp(idp('acme', { issuer }))).toBe(true);
      expect(await store.setTenantIdp(idp('globex', { issuer }))).toBe(true);
      expect(await store.getTenantIdp('acme')).toEqual(idp('acme', { issuer }));
      expect(await store.getTenantIdp('globex')).toEqual(idp('globex', { issuer }));
      expect(await store.tenantIdByClient(issuer, 'gateway-acme')).toBe('acme');
      expect(await store.tenantIdByClient(issuer, 'gateway-globex')).toBe('globex');
      // Setting its own again, or removing one, leaves the other's alone.
      expect(await store.setTenantIdp(idp('acme', { issuer, updatedAt: NOW + 1 }))).toBe(true);
      expect(await store.removeTenantIdp('globex')).toBe(true);
      expect(await store.tenantIdByClient(issuer, 'gateway-acme')).toBe('acme');
      expect(await store.tenantIdByClient(issuer, 'gateway-globex')).toBeNull();
    });

    it('compares issuers exactly: a trailing slash or a letter case is another issuer', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.upsertTenant(orgTenant('globex'), NOW);
      await store.upsertTenant(orgTenant('initech'), NOW);
      const issuer = 'https://idp.example.com/realms/shared';
      const clientId = 'gw';
      await store.setTenantIdp(idp('acme', { issuer, clientId }));
      await store.setTenantIdp(idp('globex', { issuer: `${issuer}/`, clientId }));
      await store.setTenantIdp(idp('initech', { issuer: issuer.toUpperCase(), clientId }));
      expect(await store.tenantIdByClient(issuer, clientId)).toBe('acme');
      expect(await store.tenantIdByClient(`${issuer}/`, clientId)).toBe('globex');
      expect(await store.tenantIdByClient(issuer.toUpperCase(), clientId)).toBe('initech');
      expect(
        await store.tenantIdByClient('https://idp.example.com/realms/Shared', clientId),
      ).toBeNull();
      expect(await store.tenantIdByClient(issuer, 'GW')).toBeNull();
    });

    it('removes a record and its issuer; removing again is false', async () => {
      const store = current();
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.setTenantIdp(idp('acme'));
      expect(await store.removeTenantIdp('acme')).toBe(true);
      expect(await store.getTenantIdp('acme')).toBeNull();
      expect(await store.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      expect(await store.removeTenantIdp('acme')).toBe(false);
      expect(await store.removeTenantIdp('nowhere')).toBe(false);
    });

    it('removing an org tenant removes its record and its issuer, and only its own', async () => {
      const store = current();
      const user = await store.createUser(newUser());
      await store.upsertTenant(orgTenant('acme'), NOW);
      await store.upsertTenant(orgTenant('globex'), NOW);
      await store.addMember('acme', user.id);
      await store.setTenantIdp(idp('acme', { clientSecretSealed: 'aXY.Y3Q.dGFn' }));
      await store.setTenantIdp(idp('globex'));
      expect(await store.removeOrgTenant('acme')).toEqual([user.id]);
      expect(await store.getTenantIdp('acme')).toBeNull();
      expect(await store.tenantIdByClient(idp('acme').issuer, 'gateway-acme')).toBeNull();
      expect(await store.getTenantIdp('globex')).toEqual(idp('globex'));
      // A tenant created again under the id has no identity provider.
      await store.upsertTenant(orgTenant('acme'), NOW + 1);
      expect(await store.getTenantIdp('acme')).toBeNull();
      expect(await store.setTenantIdp(idp('acme'))).toBe(true);
    });
  });
}

/** The browser sign-in's one-time records: single use, expiring, kinds apart. */
export function describeSsoRecordsContract(current: () => Store): void {
  describe('browser sign-in one-time records', () => {
    it('gives a record to its first take only', async () => {
      const store = current();
      await store.putSsoRecord('sign-in', 'state-1', '{"a":1}', 60);
      const takes = await Promise.all([
        store.takeSsoRecord('sign-in', 'state-1'),
        store.takeSsoRecord('sign-in', 'state-1'),
      ]);
      expect(takes.filter((t) => t !== null)).toEqual(['{"a":1}']);
      expect(await store.takeSsoRecord('sign-in', 'state-1')).toBeNull();
    });

    it('keeps the kinds apart and knows no made-up key', async () => {
      const store = current();
      await store.putSsoRecord('code', 'k', 'the code', 60);
      expect(await store.takeSsoRecord('sign-in', 'k')).toBeNull();
      expect(await store.takeSsoRecord('code', 'other')).toBeNull();
      expect(await store.takeSsoRecord('code', 'k')).toBe('the code');
    });

    it('forgets a record once its time is up', async () => {
      const store = current();
      await store.putSsoRecord('code', 'short', 'x', 1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await store.takeSsoRecord('code', 'short')).toBeNull();
    });
  });
}
