/**
 * Issue 43: what the operator may do and a tenant admin may not is the
 * identity operation's own rule, read from its actor — not a path only the
 * CLI takes. Vouching for a domain without DNS (`tenant domain add
 * --verified`) is refused to a tenant admin with `forbidden`, nothing stored
 * or recorded; the operator's is verified at once, both events recorded.
 * On the embedded memory store with the real audit recorder.
 */
import pino from 'pino';
import { beforeEach, expect, it } from 'vitest';
import { createAuditRecorder } from '../../src/audit/recorder.js';
import type { Actor } from '../../src/identity/actor.js';
import { addDomain } from '../../src/identity/domains.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/types.js';

let store: Store;
let deps: Parameters<typeof addDomain>[0];
const by = (actor: string) => ({ source: 'api' as const, actor });
const admin: Actor = { kind: 'member', role: 'admin', audit: by('alice@acme.test') };
const operator: Actor = { kind: 'operator', audit: { source: 'cli', actor: 'cli:ops' } };

beforeEach(async () => {
  store = createMemoryStore();
  const tenant = { tenantId: 'acme', type: 'orgtenant', name: 'Acme', cloudRegion: 'eu' } as const;
  await store.tenants.upsertTenant({ ...tenant, createdBy: 'alice@acme.test' }, 1);
  const streams = store.auditLog({ maxEventsPerStream: 100 });
  deps = { store, audit: createAuditRecorder({ streams, log: pino({ level: 'silent' }) }) };
});

const events = async () =>
  (await store.auditLog({ maxEventsPerStream: 100 }).read('tenant:acme', 0)).map(
    (entry) => (JSON.parse(entry.event) as { event: string }).event,
  );

it("refuses a tenant admin's unverified word for a domain; takes the operator's", async () => {
  await expect(
    addDomain(deps, admin, 'acme', 'acme.test', { verified: true }),
  ).rejects.toMatchObject({
    code: 'forbidden',
    message: 'Only the operator may vouch for a domain without DNS.',
  });
  expect(await store.domains.listTenantDomains('acme')).toEqual([]);
  expect(await events()).toEqual([]);

  const { record, created } = await addDomain(deps, operator, 'acme', 'acme.test', {
    verified: true,
  });
  expect({ created, verified: record.verifiedAt !== undefined }).toEqual({
    created: true,
    verified: true,
  });
  expect(await store.domains.verifiedDomainHolder('acme.test')).toBe('acme');
  expect(await events()).toEqual(['domain_added', 'domain_verified']);
});

it('lets a tenant admin claim a domain, to verify by DNS', async () => {
  const { record, created } = await addDomain(deps, admin, 'acme', 'acme.test');
  expect({ created, verified: record.verifiedAt !== undefined }).toEqual({
    created: true,
    verified: false,
  });
  expect(await events()).toEqual(['domain_added']);
});
