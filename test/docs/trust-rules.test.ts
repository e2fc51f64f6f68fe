/**
 * docs/security.md states the trust rules for tenant admins (issue 42): every
 * rule of the contract's "Tenant admins stay inside their tenant", each with
 * the attack it stops, reachable from the threat model, and naming what an
 * operator can set.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const PAGE = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');

function trustRules(): string {
  const start = PAGE.indexOf('\n## Trust rules for tenant admins\n');
  if (start < 0) throw new Error('no section "## Trust rules for tenant admins"');
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end < 0 ? undefined : end);
}

/** The numbered rules of the section, each with its text. */
function rules(): string[] {
  return trustRules()
    .split(/\n(?=\d+\. \*\*)/)
    .slice(1);
}

it('is linked from the threat model and the promise', () => {
  trustRules();
  const threatModel = PAGE.slice(
    PAGE.indexOf('## Threat model'),
    PAGE.indexOf('\n## ', PAGE.indexOf('## Threat model') + 1),
  );
  expect(threatModel).toMatch(/\| A tenant's admin .*\(#trust-rules-for-tenant-admins\)/);
  const promise = PAGE.slice(PAGE.indexOf('## The promise'), PAGE.indexOf('## Threat model'));
  expect(promise).toContain('(#trust-rules-for-tenant-admins)');
});

it('says of every rule which attack it stops', () => {
  const all = rules();
  expect(all.length).toBeGreaterThanOrEqual(16);
  const without = all.filter((rule) => !rule.includes('_Stops:_'));
  expect(without.map((rule) => rule.slice(0, 80))).toEqual([]);
});

it.each([
  [
    'verified domains, by a DNS TXT challenge',
    /verified[\s\S]*DNS TXT challenge[\s\S]*`txt_name`[\s\S]*`txt_value`/,
  ],
  ['an unverified domain refused', /`400 domain_not_verified`/],
  ["the operator's verified domain", /`tenant-gateway tenant domain add T D --verified`/],
  ['the resolver', /`sso\.dnsServers`/],
  [
    'linking within verified domains',
    /`link_existing` links only within the tenant's verified domains/,
  ],
  [
    'issuer + client id',
    /unique by `issuer` \+ `client_id`[\s\S]*One issuer may serve\s+many tenants/,
  ],
  [
    "clients within the admin's role",
    /at most the scopes of the admin's own\s+role[\s\S]*`authorization\.clientScopes`/,
  ],
  ['one rule for CLI and API', /command line and the API apply the same rules/],
  ['public issuers', /public addresses[\s\S]*`sso\.allowPrivateIssuers: true`/],
  ["the authorization endpoint's origin", /`authorization_endpoint` shares the issuer's origin/],
  ['failures cached', /`sso\.failureCacheSeconds`/],
  ['exchanges limited per IP', /`limits\.exchange`/],
  [
    'refresh successors',
    /successor is unpredictable without the store's\s+per-family secret[\s\S]*counts as reuse[\s\S]*never had does not count as reuse/,
  ],
  ["refresh and the role's current scopes", /refresh issues the role's current scopes/],
  ['refresh families per user per tenant', /Refresh families are bounded per user per tenant/],
  ['client secrets budgeted per IP', /wrong secrets are budgeted per IP[\s\S]*never\s+locked out/],
  ['PKCE S256', /PKCE with S256/],
  ['publicUrl', /`publicUrl`[\s\S]*valid\s+host/],
  ['tgk_ keys', /`tgk_` API key never reaches an upstream/],
])('states %s', (_, text) => {
  expect(trustRules()).toMatch(text);
});
