/**
 * Issue 42, the operator's side of tenants' e-mail domains: `tenant domain
 * add|list|verify|remove` as an operator runs them (the CLI as the
 * harness runs it) against a real redis-server, the TXT challenge looked up on a DNS
 * server on loopback (`sso.dnsServers`). `tenant idp set` naming a domain the
 * tenant has not verified is refused (`domain_not_verified`); `add --verified`
 * is the operator's word; a verified domain belongs to one tenant.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { type Case, type CliHarness, releaseCliHarness, sharedCliHarness } from './harness.js';
import { ALICE_ACME_GLOBEX } from './seeds.js';

const TIMEOUT = 60_000;

const SEED = ALICE_ACME_GLOBEX;

interface DomainView {
  tenant_id?: string;
  domain: string;
  verified: boolean;
  verified_at?: number;
  txt_name?: string;
  txt_value?: string;
}

let h: CliHarness;
let dns: TestDnsServer;
let kase: Case;
let prefix: string;

beforeAll(async () => {
  dns = await startDnsServer();
  h = await sharedCliHarness();
  kase = h.newCase(`sso: { dnsServers: ["${dns.address}"] }`);
  await h.ok(['keys', 'add', ...kase.c]);
  await h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]);
  prefix = /keyPrefix: "([^"]+)"/.exec(readFileSync(kase.config, 'utf8'))![1]!;
}, TIMEOUT);

afterAll(async () => {
  if (h !== undefined) await releaseCliHarness();
  await dns?.stop();
});

const idpSet = (tenant: string, domains: string) => [
  'tenant',
  'idp',
  'set',
  tenant,
  '--issuer',
  `https://login.${tenant}.example`,
  '--client-id',
  'tenant-gateway',
  '--domains',
  domains,
  ...kase.c,
];

const auditOf = (tenantId: string) => h.auditOf(kase, tenantId);

describe('tenant domain', () => {
  it(
    'add prints the TXT challenge; verify finds it through sso.dnsServers; then the IdP set is accepted',
    async () => {
      const added = await h.ok<DomainView>([
        'tenant',
        'domain',
        'add',
        'acme',
        'Acme.example',
        ...kase.c,
      ]);
      expect(added).toEqual({
        tenant_id: 'acme',
        domain: 'acme.example',
        verified: false,
        txt_name: '_tenant-gateway-challenge.acme.example',
        txt_value: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      });
      expect(await h.fails(idpSet('acme', 'acme.example'))).toMatch(
        /^error: domain_not_verified: .*acme\.example/,
      );
      expect(
        await h.fails(['tenant', 'domain', 'verify', 'acme', 'acme.example', ...kase.c]),
      ).toMatch(
        /^error: domain_not_verified: No TXT record of _tenant-gateway-challenge\.acme\.example/,
      );
      dns.setTxt(added.txt_name as string, [added.txt_value as string]);
      const verified = await h.ok<DomainView>([
        'tenant',
        'domain',
        'verify',
        'acme',
        'acme.example',
        ...kase.c,
      ]);
      expect(verified).toEqual({
        tenant_id: 'acme',
        domain: 'acme.example',
        verified: true,
        verified_at: expect.any(Number),
      });
      expect(dns.queries).toContain('_tenant-gateway-challenge.acme.example');
      expect((await h.ok<{ domains: string[] }>(idpSet('acme', 'acme.example'))).domains).toEqual([
        'acme.example',
      ]);
      const audit = await auditOf('acme');
      expect(audit).toContain('"event":"domain_added"');
      expect(audit).toContain('"event":"domain_verified"');
    },
    TIMEOUT,
  );

  it(
    "add --verified is the operator's word; another tenant's verified domain is domain_taken",
    async () => {
      const vouched = await h.ok<DomainView>([
        'tenant',
        'domain',
        'add',
        'globex',
        'globex.example',
        '--verified',
        ...kase.c,
      ]);
      expect(vouched).toMatchObject({ domain: 'globex.example', verified: true });
      expect(
        (await h.ok<{ domains: string[] }>(idpSet('globex', 'globex.example'))).domains,
      ).toEqual(['globex.example']);
      const taken = await h.fails([
        'tenant',
        'domain',
        'add',
        'globex',
        'acme.example',
        '--verified',
        ...kase.c,
      ]);
      expect(taken).toMatch(/^error: domain_taken: /);
      expect(await h.fails(idpSet('globex', 'acme.example'))).toMatch(
        /^error: domain_not_verified: /,
      );
      const listed = await h.ok<DomainView[]>(['tenant', 'domain', 'list', 'globex', ...kase.c]);
      expect(listed.map((d) => d.domain)).toEqual(['globex.example']);
    },
    TIMEOUT,
  );

  it(
    'remove takes the domain and its verification; bad arguments and tenants are refused',
    async () => {
      expect(await h.ok(['tenant', 'domain', 'remove', 'acme', 'acme.example', ...kase.c])).toEqual(
        { tenant_id: 'acme', domain: 'acme.example', removed: true },
      );
      expect(await h.ok(['tenant', 'domain', 'list', 'acme', ...kase.c])).toEqual([]);
      const redis = new Redis(h.env().TG_TEST_REDIS_URL as string);
      try {
        expect(await redis.hget(`${prefix}{dir}:verified-domains`, 'acme.example')).toBeNull();
        expect(await redis.hget(`${prefix}{dir}:verified-domains`, 'globex.example')).toBe(
          'globex',
        );
      } finally {
        redis.disconnect();
      }
      expect(await auditOf('acme')).toContain('"event":"domain_removed"');
      expect(await h.fails(['tenant', 'domain', 'remove', 'acme', 'acme.example', ...kase.c])).toBe(
        'error: acme has no domain acme.example\n',
      );
      expect(await h.fails(['tenant', 'domain', 'add', 'acme', 'not a domain', ...kase.c])).toMatch(
        /is not a DNS name/,
      );
      expect(await h.fails(['tenant', 'domain', 'add', 'nowhere', 'x.example', ...kase.c])).toBe(
        'error: no tenant nowhere\n',
      );
      // The tenant's removal takes its domains and their verifications.
      await h.ok(['tenant', 'remove', 'globex', ...kase.c]);
      const again = new Redis(h.env().TG_TEST_REDIS_URL as string);
      try {
        expect(await again.hget(`${prefix}{dir}:verified-domains`, 'globex.example')).toBeNull();
        expect(await again.exists(`${prefix}{dir}:tenant-domains:globex`)).toBe(0);
      } finally {
        again.disconnect();
      }
    },
    TIMEOUT,
  );
});
