/**
 * The declared revoking writes (`src/store/revoking-writes.ts`) are all
 * there are: every operation of every slice is called on a store holding one
 * of everything, and one that publishes a session event must be declared
 * revoking (then the lease decorator confirms it) or granting. A new
 * operation fails here until it has a call below (the table is typed
 * exhaustive, and checked against the slices at run time too).
 */
import { describe, expect, it } from 'vitest';
import { confirmRevocations } from '../../src/auth/revocation/confirmed-revocations.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { GRANTING_WRITES, REVOKING_WRITES } from '../../src/store/revoking-writes.js';
import type {
  RevocationLeases,
  SessionEvent,
  Store,
  StoreSliceName,
  StoreSlices,
} from '../../src/store/types.js';
import {
  idp,
  newBrowserSession,
  newFamily,
  newPasskey,
  newUser,
  NOW,
  orgTenant,
} from './store-fixtures.js';

/** What the calls work on: ids in a store holding one of everything. */
interface World {
  admin: string;
  member: string;
  familyId: string;
  sessionId: string;
  credentialId: string;
  passkeyId: string;
}

type Call = (store: Store, world: World) => unknown;

/** Every function of every slice, with a call that changes something where it can. */
const CALLS: {
  [S in StoreSliceName]: {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
    [K in keyof StoreSlices[S] as StoreSlices[S][K] extends Function ? K : never]-?: Call;
  };
} = {
  users: {
    createUser: (s) => s.users.createUser(newUser()),
    getUser: (s, w) => s.users.getUser(w.member),
    findUserByEmail: (s) => s.users.findUserByEmail('nobody@example.com'),
    listUsers: (s) => s.users.listUsers(),
    setPasswordHash: (s, w) => s.users.setPasswordHash(w.member, '$2b$04$changed'),
    replacePasswordHash: async (s, w) => {
      const user = await s.users.getUser(w.member);
      return s.users.replacePasswordHash(w.member, user?.passwordHash ?? '', '$2b$05$rehashed');
    },
    markEmailVerified: (s, w) => s.users.markEmailVerified(w.member, NOW),
    getSessionVersion: (s, w) => s.users.getSessionVersion(w.member),
    removeUser: (s, w) => s.users.removeUser(w.member),
  },
  tenants: {
    upsertTenant: (s) => s.tenants.upsertTenant(orgTenant('acme', { name: 'Renamed' }), NOW + 1),
    getTenant: (s) => s.tenants.getTenant('acme'),
    listTenants: (s) => s.tenants.listTenants(),
    removeOrgTenant: (s) => s.tenants.removeOrgTenant('acme'),
  },
  memberships: {
    addMember: async (s) => {
      const user = await s.users.createUser(newUser());
      return s.memberships.addMember('acme', user.id);
    },
    removeMember: (s, w) => s.memberships.removeMember('acme', w.member),
    isMember: (s, w) => s.memberships.isMember('acme', w.member),
    readMembership: (s, w) => s.memberships.readMembership('acme', w.member),
    membershipForToken: (s, w) => s.memberships.membershipForToken('acme', w.member),
    listUserTenants: (s, w) => s.memberships.listUserTenants(w.member),
    listMembers: (s) => s.memberships.listMembers('acme'),
    listMemberships: (s) => s.memberships.listMemberships('acme'),
    getMemberRole: (s, w) => s.memberships.getMemberRole('acme', w.member),
    setMemberRole: (s, w) => s.memberships.setMemberRole('acme', w.member, 'admin'),
  },
  clients: {
    createClient: (s) => s.clients.createClient(client('tgc_other')),
    getClient: (s) => s.clients.getClient('tgc_one'),
    listClients: (s) => s.clients.listClients('acme'),
    rotateClientSecret: (s) => s.clients.rotateClientSecret('tgc_one', 'f'.repeat(64), NOW + 1),
    removeClient: (s) => s.clients.removeClient('tgc_one'),
  },
  apiKeys: {
    createApiKey: (s) => s.apiKeys.createApiKey(apiKey('tgkid_other')),
    getApiKey: (s) => s.apiKeys.getApiKey('tgkid_one'),
    listApiKeys: (s) => s.apiKeys.listApiKeys('tgc_one'),
    removeApiKey: (s) => s.apiKeys.removeApiKey('tgc_one', 'tgkid_one'),
    touchApiKey: (s) => s.apiKeys.touchApiKey('tgkid_one', NOW + 1),
  },
  refresh: {
    createRefreshFamily: (s, w) =>
      s.refresh.createRefreshFamily(newFamily({ userId: w.member }), 5),
    rotateRefreshToken: async (s, w) => {
      const family = await s.refresh.getRefreshFamily(w.familyId);
      return s.refresh.rotateRefreshToken({
        familyId: w.familyId,
        presentedDigest: family?.currentDigest ?? '',
        successorDigest: 'e'.repeat(64),
        jti: 'jti-rotated',
        accessExpiresAt: NOW + 900,
        now: family?.createdAt ?? NOW,
        graceSeconds: 10,
        idleTtlSeconds: 3600,
      });
    },
    getRefreshFamily: (s, w) => s.refresh.getRefreshFamily(w.familyId),
    getRefreshFamilyToRotate: (s, w) => s.refresh.getRefreshFamilyToRotate(w.familyId),
    revokeRefreshFamily: (s, w) => s.refresh.revokeRefreshFamily(w.familyId),
    revokeRefreshFamiliesOf: (s, w) => s.refresh.revokeRefreshFamiliesOf(w.member, 'acme'),
    listRefreshFamilies: (s, w) => s.refresh.listRefreshFamilies(w.member),
  },
  idps: {
    setTenantIdp: (s) => s.idps.setTenantIdp(idp('acme', { role: 'admin' })),
    getTenantIdp: (s) => s.idps.getTenantIdp('acme'),
    removeTenantIdp: (s) => s.idps.removeTenantIdp('acme'),
    tenantIdByClient: (s) => s.idps.tenantIdByClient(idp('acme').issuer, idp('acme').clientId),
  },
  sso: {
    putSsoRecord: (s) => s.sso.putSsoRecord('code', 'other', 'value', 60),
    takeSsoRecord: (s) => s.sso.takeSsoRecord('code', 'one'),
    readSsoRecord: (s) => s.sso.readSsoRecord('code', 'one'),
    addSsoRecord: (s) => s.sso.addSsoRecord('logout-jti', 'jti', '1', 60),
  },
  domains: {
    addTenantDomain: (s) => s.domains.addTenantDomain(domain('other.example')),
    listTenantDomains: (s) => s.domains.listTenantDomains('acme'),
    verifyTenantDomain: (s) => s.domains.verifyTenantDomain('acme', 'acme.example', NOW + 1),
    removeTenantDomain: (s) => s.domains.removeTenantDomain('acme', 'acme.example'),
    verifiedDomainHolder: (s) => s.domains.verifiedDomainHolder('acme.example'),
  },
  revocations: {
    revokeToken: (s) => s.revocations.revokeToken('jti-one', Math.floor(Date.now() / 1000) + 60),
    isTokenRevoked: (s) => s.revocations.isTokenRevoked('jti-one'),
    watchSessions: (s) => s.revocations.watchSessions({ onEvent() {}, onLive() {} })(),
  },
  browserSessions: {
    createBrowserSession: (s, w) =>
      s.browserSessions.createBrowserSession(newBrowserSession({ userId: w.member })),
    getBrowserSession: (s, w) => s.browserSessions.getBrowserSession(w.sessionId),
    listBrowserSessions: (s, w) => s.browserSessions.listBrowserSessions(w.member),
    touchBrowserSession: (s, w) =>
      s.browserSessions.touchBrowserSession(w.sessionId, Math.floor(Date.now() / 1000) + 60),
    removeBrowserSession: (s, w) => s.browserSessions.removeBrowserSession(w.sessionId),
  },
  passkeys: {
    addPasskey: (s, w) => s.passkeys.addPasskey(newPasskey(w.member)),
    listPasskeys: (s, w) => s.passkeys.listPasskeys(w.member),
    getPasskey: (s, w) => s.passkeys.getPasskey(w.credentialId),
    usePasskey: (s, w) => s.passkeys.usePasskey(w.credentialId, 1, NOW + 1),
    removePasskey: (s, w) => s.passkeys.removePasskey(w.member, w.passkeyId),
  },
  totp: {
    putPendingTotp: (s, w) =>
      s.totp.putPendingTotp(w.member, { secretSealed: 'sealed-new', createdAt: NOW }),
    getTotp: (s, w) => s.totp.getTotp(w.member),
    confirmTotp: (s, w) =>
      s.totp.confirmTotp(w.member, 'sealed-new', { step: 1, recoveryDigests: ['d1'], at: NOW }),
    acceptTotpStep: (s, w) => s.totp.acceptTotpStep(w.member, 2),
    takeRecoveryCode: (s, w) => s.totp.takeRecoveryCode(w.member, 'd1'),
    removeTotp: (s, w) => s.totp.removeTotp(w.member),
  },
  invitations: {
    addInvitation: (s) => s.invitations.addInvitation(invitation('inv_two', 'd'), 10),
    listInvitations: (s) => s.invitations.listInvitations('acme', nowSeconds()),
    findInvitation: (s) => s.invitations.findInvitation('c'.repeat(64), nowSeconds()),
    takeInvitation: (s) => s.invitations.takeInvitation('c'.repeat(64), nowSeconds()),
    removeInvitation: (s) => s.invitations.removeInvitation('acme', 'inv_one'),
  },
};

const nowSeconds = () => Math.floor(Date.now() / 1000);

const invitation = (id: string, digit: string) => ({
  id,
  tenantId: 'acme',
  email: `${id}@example.com`,
  role: 'member' as const,
  createdAt: nowSeconds(),
  expiresAt: nowSeconds() + 3600,
  invitedBy: 'admin@example.com',
  tokenDigest: digit.repeat(64),
});

const client = (clientId: string) => ({
  clientId,
  tenantId: 'acme',
  name: clientId,
  scopes: ['orders:read'],
  secretDigest: 'a'.repeat(64),
  createdAt: NOW,
});

const apiKey = (keyId: string) => ({
  keyId,
  clientId: 'tgc_one',
  digest: 'b'.repeat(64),
  createdAt: NOW,
});

const domain = (name: string) => ({
  tenantId: 'acme',
  domain: name,
  challenge: 'challenge',
  createdAt: NOW,
});

/**
 * A store holding a tenant with two members, a client and its key, a family,
 * an IdP, a domain, a one-time record, a browser session, a passkey, a TOTP factor, an invitation.
 */
async function world(store: Store): Promise<World> {
  const admin = await store.users.createUser(newUser());
  const member = await store.users.createUser(newUser());
  await store.tenants.upsertTenant(orgTenant('acme'), NOW);
  await store.memberships.addMember('acme', admin.id, 'admin');
  await store.memberships.addMember('acme', member.id, 'member');
  await store.clients.createClient(client('tgc_one'));
  await store.apiKeys.createApiKey(apiKey('tgkid_one'));
  const family = newFamily({ userId: member.id });
  await store.refresh.createRefreshFamily(family, 5);
  await store.idps.setTenantIdp(idp('acme'));
  await store.domains.addTenantDomain(domain('acme.example'));
  await store.sso.putSsoRecord('code', 'one', 'value', 60);
  const session = newBrowserSession({ userId: member.id });
  await store.browserSessions.createBrowserSession(session);
  const passkey = newPasskey(member.id);
  await store.passkeys.addPasskey(passkey);
  await store.totp.putPendingTotp(member.id, { secretSealed: 'sealed-one', createdAt: NOW });
  await store.totp.confirmTotp(member.id, 'sealed-one', {
    step: 1,
    recoveryDigests: ['d0'],
    at: NOW,
  });
  await store.invitations.addInvitation(invitation('inv_one', 'c'), 10);
  return {
    credentialId: passkey.credentialId,
    passkeyId: passkey.passkeyId,
    admin: admin.id,
    member: member.id,
    familyId: family.familyId,
    sessionId: session.sessionId,
  };
}

const revokingOf = (slice: StoreSliceName): string[] =>
  Object.keys(REVOKING_WRITES[slice as keyof typeof REVOKING_WRITES] ?? {});
const grantingOf = (slice: StoreSliceName): readonly string[] => GRANTING_WRITES[slice] ?? [];

/** Whom or what an event is about. */
function subject(event: SessionEvent): string {
  switch (event.kind) {
    case 'session-ended':
      return `user ${event.userId}`;
    case 'token-revoked':
      return `token ${event.jti}`;
    case 'client-changed':
      return `client ${event.clientId}`;
    default:
      return `member ${event.userId} of ${event.tenantId}`;
  }
}

/** The slices' functions, as the store has them. */
function operations(store: Store): [StoreSliceName, string][] {
  return (Object.keys(CALLS) as StoreSliceName[]).flatMap((slice) =>
    Object.entries(store[slice])
      .filter(([, value]) => typeof value === 'function')
      .map(([name]): [StoreSliceName, string] => [slice, name]),
  );
}

/** Leases that record the confirmations asked for, every holder acknowledging at once. */
function recordingLeases(): { leases: RevocationLeases; confirmed: SessionEvent[][] } {
  const confirmed: SessionEvent[][] = [];
  const leases: RevocationLeases = {
    hold: async () => true,
    release: async () => {},
    requestConfirmation: async (_, events) => void confirmed.push([...events]),
    acknowledge: async () => {},
    unacknowledged: async () => 0,
    fenceUnacknowledged: async () => 0,
  };
  return { leases, confirmed };
}

/**
 * A world in a memory store behind `confirmRevocations`, with the session
 * events the store published and the revocations it had confirmed recorded.
 */
async function recordedWorld() {
  const inner = createMemoryStore();
  const w = await world(inner);
  const published: SessionEvent[] = [];
  inner.revocations.watchSessions({ onEvent: (e) => published.push(e), onLive() {} });
  const { leases, confirmed } = recordingLeases();
  const store = confirmRevocations(
    { ...inner, revocations: { ...inner.revocations, leases } },
    1000,
  );
  return { store, w, published, confirmed };
}

describe('revoking writes', () => {
  const all = operations(createMemoryStore());

  it('has a call for every operation of every slice, and no call for one that does not exist', () => {
    const called = (Object.entries(CALLS) as [string, object][]).flatMap(([slice, calls]) =>
      Object.keys(calls).map((name) => `${slice}.${name}`),
    );
    expect(called.sort()).toEqual(all.map(([slice, name]) => `${slice}.${name}`).sort());
    expect(all.length).toBeGreaterThan(50);
  });

  it('declares only operations the slices have', () => {
    const known = new Set(all.map(([slice, name]) => `${slice}.${name}`));
    for (const slice of Object.keys(CALLS) as StoreSliceName[]) {
      for (const name of [...revokingOf(slice), ...grantingOf(slice)]) {
        expect(known).toContain(`${slice}.${name}`);
      }
    }
  });

  it.each(all)(
    '%s.%s publishes a session event only when declared, and is confirmed exactly when revoking',
    async (slice, name) => {
      const { store, w, published, confirmed } = await recordedWorld();
      await (CALLS[slice] as Record<string, Call>)[name]?.(store, w);
      if (revokingOf(slice).includes(name)) {
        expect(published).not.toEqual([]);
        expect(confirmed).toHaveLength(1);
        expect(confirmed[0]).not.toEqual([]);
        const subjects = new Set(published.map(subject));
        for (const event of confirmed[0] ?? []) expect(subjects).toContain(subject(event));
      } else {
        if (!grantingOf(slice).includes(name)) expect(published).toEqual([]);
        expect(confirmed).toEqual([]);
      }
    },
  );

  it('a change refused to keep the last admin publishes nothing and is not confirmed', async () => {
    const { store, w, published, confirmed } = await recordedWorld();
    const keep = { keepAnAdmin: true } as const;
    expect(await store.memberships.setMemberRole('acme', w.admin, 'member', keep)).toBe(
      'last-admin',
    );
    expect(await store.memberships.removeMember('acme', w.admin, keep)).toBe('last-admin');
    expect(published).toEqual([]);
    expect(confirmed).toEqual([]);
  });
});
