/**
 * The seed file, also the input of the `seed` command. Applying it
 * is idempotent: users are created once and their password replaced only when
 * it no longer matches; tenants are created or updated only when they differ;
 * listed members are added (never removed). The file is validated as a whole
 * before anything is written.
 *
 * A seed never removes a membership: it runs at every start, and leaving a
 * name out of `members` must not undo memberships made since by the CLI. A
 * member is removed with `member remove TENANT EMAIL`, which ends that user's
 * tokens for the tenant on every instance at once (the store publishes
 * `membership-removed`).
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { AuditActor } from '../audit/events.js';
import type { AuditRecorder } from '../audit/recorder.js';
import { describeIssue, problemMessages } from '../config/problems.js';
import type { Store, TenantRecord } from '../store/types.js';
import { normaliseEmail } from '../store/normalise.js';
import { basicCanCarryPassword } from './credentials/basic.js';
import { checkEmail, isValidTenantId, type Accounts } from './accounts.js';
import { disabledHash, enabledHash, isDisabledHash } from './revocation/disabled.js';
import { checkPasswordPolicy, isBcryptHash, type PasswordHasher } from './passwords/passwords.js';

const email = () => z.string().refine(valid(checkEmail), 'must be an e-mail address');

const seedUser = z
  .strictObject({
    email: email(),
    password: z
      .string()
      .refine(
        basicCanCarryPassword,
        'must not contain control characters (HTTP Basic could not carry them)',
      )
      .refine(
        // One problem per password: the length is checked once Basic can carry it.
        (v) => !basicCanCarryPassword(v) || valid(checkPasswordPolicy)(v),
        'must be 8 to 72 bytes',
      )
      .optional(),
    password_hash: z.string().refine(isBcryptHash, 'must be a bcrypt hash').optional(),
    name: z.string().min(1).optional(),
    /** The operator vouches for the address (issue 45): it signs in and may be linked by an IdP. */
    email_verified: z.boolean().default(false),
  })
  .refine((u) => (u.password === undefined) !== (u.password_hash === undefined), {
    message: 'needs exactly one of password, password_hash',
  });

const seedTenant = z.strictObject({
  tenant_id: z
    .string()
    .refine(isValidTenantId, 'must be a lower-case DNS label (a-z 0-9 - _), not "current"'),
  type: z
    .literal('orgtenant', 'must be orgtenant (personal tenants come with their user)')
    .default('orgtenant'),
  name: z.string().min(1),
  cloud_region: z.string().min(1),
  created_by: email(),
  members: z.array(email()).default([]),
});

const seedSchema = z.strictObject({
  users: z.array(seedUser).default([]),
  tenants: z.array(seedTenant).default([]),
});

export type SeedData = z.output<typeof seedSchema>;

export class SeedError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`invalid seed ${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'SeedError';
    this.problems = problems;
  }
}

/** What applying a seed changed: all zeros when the store already matched it. */
export interface SeedSummary {
  usersCreated: number;
  passwordsChanged: number;
  tenantsCreated: number;
  tenantsUpdated: number;
  membershipsAdded: number;
}

/** Reads and validates a seed file. @throws SeedError */
export async function readSeedFile(file: string): Promise<SeedData> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new SeedError(file, [`cannot read the file: ${(err as NodeJS.ErrnoException).code}`]);
  }
  return parseSeedText(text, file);
}

/**
 * The problems of a seed file, none when it is good: what `serve` and
 * `config check` report with the config's own (`ServingChecks`).
 */
export async function seedFileProblems(file: string): Promise<string[]> {
  try {
    await readSeedFile(file);
    return [];
  } catch (err) {
    if (err instanceof SeedError) return err.problems;
    throw err;
  }
}

/** Parses and validates seed YAML; every problem is named by its key path. @throws SeedError */
export function parseSeedText(text: string, source: string): SeedData {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new SeedError(
      source,
      doc.errors.map((e) => `YAML: ${(e.message.split('\n')[0] ?? '').replace(/:$/, '')}`),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS() ?? {};
  } catch (err) {
    throw new SeedError(source, [`YAML: ${(err as Error).message}`]);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SeedError(source, ['(top level): must be a mapping with users and tenants']);
  }
  const result = seedSchema.safeParse(raw, { error: problemMessages });
  if (!result.success) {
    throw new SeedError(
      source,
      result.error.issues.flatMap((issue) => describeIssue(issue, seedSchema)),
    );
  }
  const problems = crossCheck(result.data);
  if (problems.length > 0) throw new SeedError(source, problems);
  return result.data;
}

/** What the schema cannot see: duplicates, and members that are not seed users. */
function crossCheck(seed: SeedData): string[] {
  const problems: string[] = [];
  const users = new Map<string, number>();
  seed.users.forEach((u, i) => {
    const key = normaliseEmail(u.email);
    const first = users.get(key);
    if (first === undefined) users.set(key, i);
    else problems.push(`users[${i}].email: duplicates users[${first}].email`);
  });
  const tenants = new Map<string, number>();
  seed.tenants.forEach((t, i) => {
    const first = tenants.get(t.tenant_id);
    if (first === undefined) tenants.set(t.tenant_id, i);
    else problems.push(`tenants[${i}].tenant_id: duplicates tenants[${first}].tenant_id`);
    t.members.forEach((m, j) => {
      if (!users.has(normaliseEmail(m))) {
        problems.push(`tenants[${i}].members[${j}]: ${m} is not among users`);
      }
    });
  });
  return problems;
}

const SEED: AuditActor = { source: 'seed', actor: 'seed' };

/** One application of a seed: where it writes, and what it has changed so far. */
interface SeedRun {
  store: Store;
  accounts: Accounts;
  passwords: PasswordHasher;
  audit: AuditRecorder['record'];
  now: () => number;
  summary: SeedSummary;
}

type SeedUser = SeedData['users'][number];
type SeedTenant = SeedData['tenants'][number];

/**
 * Writes the seed into the store. A tenant id that is somebody's personal
 * tenant is refused before anything is written. Each change it makes is an
 * audit event (none when the store already matched).
 * @throws SeedError
 */
export async function applySeed(
  seed: SeedData,
  deps: {
    store: Store;
    accounts: Accounts;
    passwords: PasswordHasher;
    audit?: AuditRecorder;
    now?: () => number;
  },
): Promise<SeedSummary> {
  const { store } = deps;
  const run: SeedRun = {
    store,
    accounts: deps.accounts,
    passwords: deps.passwords,
    audit: (kind, actor, subject) => deps.audit?.record(kind, actor, subject) ?? Promise.resolve(),
    now: deps.now ?? (() => Math.floor(Date.now() / 1000)),
    summary: {
      usersCreated: 0,
      passwordsChanged: 0,
      tenantsCreated: 0,
      tenantsUpdated: 0,
      membershipsAdded: 0,
    },
  };

  const existingTenants = await Promise.all(
    seed.tenants.map((t) => store.tenants.getTenant(t.tenant_id)),
  );
  const clashes = existingTenants.flatMap((t, i) =>
    t?.type === 'usertenant' ? [`tenants[${i}].tenant_id: ${t.tenantId} is a personal tenant`] : [],
  );
  if (clashes.length > 0) throw new SeedError('(against the store)', clashes);

  /** e-mail → user id */
  const ids = new Map<string, string>();
  for (const u of seed.users) ids.set(normaliseEmail(u.email), await applyUser(run, u));
  for (const [i, t] of seed.tenants.entries()) {
    await applyTenant(run, t, existingTenants[i] ?? null);
    await addMembers(run, t, ids);
  }
  return run.summary;
}

/** Creates the user, or replaces a password that no longer matches. @returns the user's id */
async function applyUser(run: SeedRun, u: SeedUser): Promise<string> {
  const { store, passwords, summary } = run;
  const email = normaliseEmail(u.email);
  const existing = await store.users.findUserByEmail(email);
  if (existing === null) {
    const user = await run.accounts.signUp({
      email,
      byOperator: true,
      ...(u.password === undefined ? {} : { password: u.password }),
      ...(u.password_hash === undefined ? {} : { passwordHash: u.password_hash }),
      ...(u.name === undefined ? {} : { name: u.name }),
      emailVerified: u.email_verified,
    });
    summary.usersCreated++;
    await run.audit('user_created', SEED, {
      tenant_id: user.personalTenantId,
      user_id: user.id,
      user_email: user.email,
    });
    return user.id;
  }
  // A disabled user is compared by the hash behind the mark, and stays disabled.
  const disabled = isDisabledHash(existing.passwordHash);
  const current = enabledHash(existing.passwordHash);
  const same =
    u.password !== undefined
      ? await passwords.verify(u.password, current)
      : u.password_hash === current;
  if (!same) {
    const hash = u.password_hash ?? (await passwords.hash(u.password as string));
    // A new password ends the user's sessions, as it does through the API.
    await store.users.setPasswordHash(existing.id, disabled ? disabledHash(hash) : hash);
    summary.passwordsChanged++;
    await run.audit('password_changed', SEED, { user_id: existing.id, user_email: email });
  }
  // Never unverified by a seed: an address once proven stays so.
  if (u.email_verified && existing.emailVerifiedAt === undefined) {
    await store.users.markEmailVerified(existing.id, run.now());
    await run.audit('email_verified', SEED, { user_id: existing.id, user_email: email });
  }
  return existing.id;
}

/** Creates the tenant, or updates it when it differs. */
async function applyTenant(
  run: SeedRun,
  t: SeedTenant,
  existing: TenantRecord | null,
): Promise<void> {
  const input = {
    tenantId: t.tenant_id,
    type: t.type,
    name: t.name,
    cloudRegion: t.cloud_region,
    createdBy: normaliseEmail(t.created_by),
  };
  if (existing === null) {
    await run.store.tenants.upsertTenant(input, run.now());
    run.summary.tenantsCreated++;
    await run.audit('tenant_created', SEED, { tenant_id: t.tenant_id });
  } else if (tenantDiffers(existing, input)) {
    await run.store.tenants.upsertTenant(input, run.now());
    run.summary.tenantsUpdated++;
    await run.audit('tenant_updated', SEED, { tenant_id: t.tenant_id });
  }
}

/** Adds the listed members that are not members yet (never removes one). */
async function addMembers(run: SeedRun, t: SeedTenant, ids: Map<string, string>): Promise<void> {
  for (const m of t.members) {
    const email = normaliseEmail(m);
    const userId = ids.get(email) as string;
    if (!(await run.store.memberships.isMember(t.tenant_id, userId))) {
      await run.store.memberships.addMember(t.tenant_id, userId);
      run.summary.membershipsAdded++;
      await run.audit('member_added', SEED, {
        tenant_id: t.tenant_id,
        user_id: userId,
        user_email: email,
      });
    }
  }
}

/** Whether an upsert of `input` would change `existing`. */
export function tenantDiffers(
  existing: TenantRecord,
  input: Pick<TenantRecord, 'type' | 'name' | 'cloudRegion' | 'createdBy'>,
): boolean {
  return (
    existing.type !== input.type ||
    existing.name !== input.name ||
    existing.cloudRegion !== input.cloudRegion ||
    existing.createdBy !== input.createdBy
  );
}

function valid(check: (value: string) => unknown): (value: string) => boolean {
  return (value) => {
    try {
      check(value);
      return true;
    } catch {
      return false;
    }
  };
}
