/** Seed files the CLI suites share. */

/** Alice, and two org tenants she created: acme (she is its member) and globex (no members). */
export const ALICE_ACME_GLOBEX = [
  'users:',
  '  - { email: alice@example.com, password: "alice-password-1" }',
  'tenants:',
  '  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: alice@example.com,',
  '      members: [alice@example.com] }',
  '  - { tenant_id: globex, name: Globex, cloud_region: eu-west-1, created_by: alice@example.com,',
  '      members: [] }',
].join('\n');
