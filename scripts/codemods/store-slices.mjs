#!/usr/bin/env node
/**
 * Codemod (issue 43): flat store calls to slice calls. `store.getUser(id)`
 * becomes `store.users.getUser(id)`, `store.revocationLeases` becomes
 * `store.revocations.leases`, `vi.spyOn(store, 'getUser')` becomes
 * `vi.spyOn(store.users, 'getUser')`. Operation names are kept; the few
 * store modules and types renamed with the slicing are renamed
 * (`RENAMED_WORDS`: `store/refresh-types.js`, `TenantIdps`, …).
 *
 *   node scripts/codemods/store-slices.mjs [--check] [--any-receiver] [path …]
 *
 * Paths (files or folders) default to src, test, bench, soak and scripts.
 * `--check` writes nothing and exits 1 when a file would change.
 *
 * A call is rewritten when its receiver looks like a whole store: an
 * identifier `store`, or one ending in `Store` that does not name a slice
 * (`userStore` is one already), or one of the names the tests give a store
 * they wrap (`inner`, `writer`, `watcher`). `--any-receiver` drops that rule
 * (any `x.getUser(` is rewritten unless `x` is a slice): for a branch that
 * names its stores otherwise; check what it changed.
 *
 * Idempotent: a receiver that is a slice (`store.users`) never matches, so a
 * second run changes nothing. The store's own slice implementations
 * (`src/store/memory-*.ts`, `src/store/redis-*.ts`, whose Redis scripts share
 * the operations' names) are skipped. Plain node, no dependencies.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each slice's operations (`src/store/<slice>.ts`); `test/store/store-slices.test.ts` holds it to the store. */
export const SLICE_OPERATIONS = {
  users: [
    'createUser',
    'getUser',
    'findUserByEmail',
    'listUsers',
    'setPasswordHash',
    'replacePasswordHash',
    'getSessionVersion',
    'removeUser',
  ],
  tenants: ['upsertTenant', 'getTenant', 'listTenants', 'removeOrgTenant'],
  memberships: [
    'addMember',
    'removeMember',
    'isMember',
    'readMembership',
    'membershipForToken',
    'listUserTenants',
    'listMembers',
    'getMemberRole',
    'setMemberRole',
  ],
  clients: ['createClient', 'getClient', 'listClients', 'rotateClientSecret', 'removeClient'],
  apiKeys: ['createApiKey', 'getApiKey', 'listApiKeys', 'removeApiKey', 'touchApiKey'],
  refresh: [
    'createRefreshFamily',
    'rotateRefreshToken',
    'getRefreshFamily',
    'getRefreshFamilyToRotate',
    'revokeRefreshFamily',
    'revokeRefreshFamiliesOf',
  ],
  idps: ['setTenantIdp', 'getTenantIdp', 'removeTenantIdp', 'tenantIdByClient'],
  sso: ['putSsoRecord', 'takeSsoRecord'],
  domains: [
    'addTenantDomain',
    'listTenantDomains',
    'verifyTenantDomain',
    'removeTenantDomain',
    'verifiedDomainHolder',
  ],
  revocations: ['revokeToken', 'isTokenRevoked', 'watchSessions'],
};

/** Store modules and types renamed with the slicing (issue 43): old → new, whole words. */
export const RENAMED_WORDS = {
  'store/refresh-types.js': 'store/refresh.js',
  'store/idp-types.js': 'store/idps.js',
  'store/domain-types.js': 'store/domains.js',
  RefreshFamilyStore: 'RefreshStore',
  TenantIdps: 'IdpStore',
  TenantDomains: 'DomainStore',
  SsoRecords: 'SsoStore',
};
const WORD = new RegExp(
  `(?<![\\w$])(${Object.keys(RENAMED_WORDS)
    .map((w) => w.replace(/[.]/g, '\\.'))
    .join('|')})(?![\\w$])`,
  'g',
);

/** Flat members that moved under another name: flat name → [slice, new name]. */
export const RENAMED = { revocationLeases: ['revocations', 'leases'] };

const SLICES = Object.keys(SLICE_OPERATIONS);
const SLICE_OF = new Map([
  ...Object.entries(SLICE_OPERATIONS).flatMap(([slice, ops]) => ops.map((op) => [op, [slice, op]])),
  ...Object.entries(RENAMED),
]);
const NAMES = [...SLICE_OF.keys()].join('|');
const TEST_STORE_NAMES = ['inner', 'writer', 'watcher'];
/** `userStore`, `apiKeysStore`, …: a slice already, never a whole store. */
const SLICE_STORE = new RegExp(
  `(?:${SLICES.map((s) => s.replace(/s$/, '')).join('|')})s?Store$`,
  'i',
);

const isStoreName = (name, anyReceiver) =>
  !SLICES.includes(name) &&
  (anyReceiver ||
    ((name === 'store' || name.endsWith('Store')) && !SLICE_STORE.test(name)) ||
    TEST_STORE_NAMES.includes(name));

/**
 * `receiver.op` / `receiver?.op` / `receiver!.op`, across line breaks; not
 * `x.slice.op`, nor a string that starts with the receiver (`'store.getUser'`
 * is a span's name).
 */
const MEMBER = new RegExp(`(?<![\\w$'"])([\\w$]+)(!?\\s*\\??\\.\\s*)(${NAMES})\\b`, 'g');
/** `spyOn(receiver, 'op')`. */
const SPY = new RegExp(`(spyOn\\(\\s*[\\w$.]*?)([\\w$]+)(\\s*,\\s*['"])(${NAMES})(['"])`, 'g');

/** The text with its flat store calls rewritten. */
export function rewrite(text, { anyReceiver = false } = {}) {
  return text
    .replace(MEMBER, (all, receiver, dot, name) => {
      if (!isStoreName(receiver, anyReceiver)) return all;
      const [slice, renamed] = SLICE_OF.get(name);
      return `${receiver}${dot}${slice}.${renamed}`;
    })
    .replace(SPY, (all, head, receiver, sep, name, close) => {
      if (!isStoreName(receiver, anyReceiver) || name in RENAMED) return all;
      return `${head}${receiver}.${SLICE_OF.get(name)[0]}${sep}${name}${close}`;
    })
    .replace(WORD, (word) => RENAMED_WORDS[word]);
}

const SOURCE = /\.(?:ts|mts|cts|tsx|js|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage']);

/** Whether the file is a slice implementation (or this codemod, or its test): never rewritten. */
export function skipped(path) {
  const p = path.split(sep).join('/');
  return (
    /(^|\/)src\/store\/(memory|redis)-[^/]+$/.test(p) ||
    p.endsWith('codemods/store-slices.mjs') ||
    p.endsWith('store/store-slices-codemod.test.ts')
  );
}

function* sourceFiles(path) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (!SKIPPED_DIRS.has(entry)) yield* sourceFiles(join(path, entry));
    }
  } else if (SOURCE.test(path) && !skipped(path)) yield path;
}

/**
 * Rewrites the flat store calls in every source file under `roots`.
 * @returns the files changed (with `check`: that would change; nothing is written).
 */
export function rewriteFiles(roots, { check = false, anyReceiver = false } = {}) {
  const changed = [];
  for (const root of roots) {
    for (const file of sourceFiles(root)) {
      const text = readFileSync(file, 'utf8');
      const next = rewrite(text, { anyReceiver });
      if (next === text) continue;
      changed.push(file);
      if (!check) writeFileSync(file, next);
    }
  }
  return changed;
}

function main(argv) {
  const check = argv.includes('--check');
  const anyReceiver = argv.includes('--any-receiver');
  const paths = argv.filter((a) => !a.startsWith('--'));
  const roots = paths.length > 0 ? paths : ['src', 'test', 'bench', 'soak', 'scripts'];
  const changed = rewriteFiles(roots, { check, anyReceiver });
  for (const file of changed)
    console.log(`${check ? 'would rewrite' : 'rewrote'} ${relative('.', file)}`);
  if (check && changed.length > 0) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
