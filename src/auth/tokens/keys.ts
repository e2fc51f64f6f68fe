/**
 * Signing keys: one PKCS#8 PEM private key per `*.pem` file, Ed25519
 * (EdDSA) or P-256 (ES256). A key's `kid` is its file name without `.pem`; the
 * name that sorts last signs; every key verifies and is published in the JWKS.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { link, mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { exportJWK, type JWK } from 'jose';

export type SigningAlgorithm = 'EdDSA' | 'ES256';

export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  /**
   * When the key was made (Unix ms): the time its kid names when it is one
   * `generateKeyFile` writes (`20261124T234710Z`), else its file's time — a
   * Kubernetes Secret volume's files take the time they were mounted.
   */
  createdAt: number;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface KeySet {
  /** The key new tokens are signed with. */
  signing: SigningKey;
  /** Every key that verifies, by kid. */
  byKid: ReadonlyMap<string, SigningKey>;
  /** The public JWK Set served at `/.well-known/jwks.json`. */
  jwks: { keys: JWK[] };
}

export class KeyLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyLoadError';
  }
}

interface Warn {
  warn(obj: object, msg: string): void;
}

const KID = /^[A-Za-z0-9._-]{1,128}$/;

/** Whether a `kid` could name a key file at all (a token's header is checked with this before any disk read). */
export function isUsableKid(kid: unknown): kid is string {
  return typeof kid === 'string' && KID.test(kid);
}

/** The same verifying key: same algorithm and public key (a reload builds new objects for unchanged files). */
export function isSameKey(a: SigningKey, b: SigningKey | undefined): boolean {
  return b !== undefined && (a === b || (a.alg === b.alg && a.publicKey.equals(b.publicKey)));
}

/**
 * Loads the key directory. At start, a missing or empty directory gets a new
 * Ed25519 key (warned: replicas must share one directory); no directory at
 * all means an in-memory key that dies with the process (warned).
 * A reload (`reloading`) never generates: a shared directory seen empty for a
 * moment (a volume being remounted, a rotation script mid-way) would otherwise
 * make this instance sign with a key no other instance knows.
 * @throws KeyLoadError for a file that is not a usable private key, and on a
 *   reload of a directory without key files.
 */
export async function loadKeySet(
  dir: string | undefined,
  log: Warn,
  { reloading = false }: { reloading?: boolean } = {},
): Promise<KeySet> {
  if (dir === undefined) {
    log.warn(
      {},
      'tokens.keys is not set: signing with an ephemeral key; tokens die with this process and other instances cannot verify them',
    );
    const { privateKey } = generateKeyPairSync('ed25519');
    return buildKeySet([
      await toSigningKey(`ephemeral-${randomUUID().slice(0, 8)}`, privateKey, Date.now()),
    ]);
  }
  let names = await listKeyFiles(dir);
  if (names.length === 0 && reloading) {
    throw new KeyLoadError(`${dir}: no key files (*.pem); keeping the keys already loaded`);
  }
  if (names.length === 0) {
    const file = await generateFirstKeyFile(dir);
    if (file !== undefined)
      log.warn(
        { dir, file },
        'no signing key found: generated one; share this directory with every instance',
      );
    names = await listKeyFiles(dir);
  }
  const keys: SigningKey[] = [];
  for (const name of names) {
    const kid = name.slice(0, -'.pem'.length);
    if (!isUsableKid(kid))
      throw new KeyLoadError(
        `${join(dir, name)}: file name is not a usable kid (A-Z a-z 0-9 . _ -)`,
      );
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(await readFile(join(dir, name), 'utf8'));
    } catch {
      throw new KeyLoadError(`${join(dir, name)}: not a PEM private key`);
    }
    const createdAt = kidTime(kid) ?? (await stat(join(dir, name))).mtimeMs;
    keys.push(await toSigningKey(kid, privateKey, createdAt, join(dir, name)));
  }
  return buildKeySet(keys);
}

/**
 * Writes a new Ed25519 key whose name sorts after every existing one, so it
 * signs from the next load on. A process starting beside it never reads a
 * half-written key: the file appears whole, under its name, or not at all.
 * @returns the file path.
 */
export async function generateKeyFile(dir: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const file = join(dir, `${await nextKid(dir)}.pem`);
    if (await writeNewKey(file)) return file;
    // Another process took this name meanwhile: name it after that one (each round, one wins).
    if (attempt === 20) throw new KeyLoadError(`${file}: written by another process meanwhile`);
  }
}

/**
 * The key of an empty directory. Processes starting at once on it in the
 * same second name it alike: the first to write it wins, the others load
 * it. @returns its path, undefined when another process wrote it first.
 */
async function generateFirstKeyFile(dir: string): Promise<string | undefined> {
  const file = join(dir, `${await nextKid(dir)}.pem`);
  return (await writeNewKey(file)) ? file : undefined;
}

/**
 * Creates `file` with a new key, whole: written under a temporary name, then
 * linked to its own, which fails if it exists. A file system without hard
 * links gets the file written in place (exclusive, but not whole at once).
 * @returns false when the file existed.
 */
async function writeNewKey(file: string): Promise<boolean> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const temporary = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`);
  await writeFile(temporary, pem, { mode: 0o600, flag: 'wx' });
  try {
    return await created(() => link(temporary, file));
  } catch (err) {
    if (!NO_HARD_LINKS.includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    return await created(() => writeFile(file, pem, { mode: 0o600, flag: 'wx' }));
  } finally {
    await unlink(temporary);
  }
}

/** Runs an exclusive create: false when the file existed. */
async function created(create: () => Promise<void>): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** What `link` fails with where the file system has no hard links. */
const NO_HARD_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'];

/** A kid that sorts after every key in `dir` (which it creates if missing). */
async function nextKid(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const existing = await listKeyFiles(dir);
  const last = existing.at(-1);
  let kid = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  if (last !== undefined && `${kid}.pem` <= last) {
    // A key of this second (or a hand-named one) already sorts last: extend
    // its name, `_` sorting after `.` (`<kid>_0001.pem` > `<kid>.pem`).
    const base = last.slice(0, -'.pem'.length).replace(/_\d{4}$/, '');
    for (let n = 1; `${kid}.pem` <= last; n++) {
      if (n > 9999) throw new KeyLoadError(`${dir}: cannot name a key that sorts after ${last}`);
      kid = `${base}_${String(n).padStart(4, '0')}`;
    }
  }
  return kid;
}

async function listKeyFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // A Kubernetes Secret volume holds each key as a symlink (`k.pem -> ..data/k.pem`)
  // beside `..data` folders: follow links, skip the `..` entries.
  const files: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.pem') || name.startsWith('..')) continue;
    if ((await stat(join(dir, name))).isFile()) files.push(name);
  }
  return files.sort();
}

/** The time a kid written by `generateKeyFile` names (`20261124T234710Z`, maybe `_0001`), in Unix ms. */
function kidTime(kid: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z(?:_\d{4})?$/.exec(kid);
  if (m === null) return undefined;
  const time = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(time) ? undefined : time;
}

async function toSigningKey(
  kid: string,
  privateKey: KeyObject,
  createdAt: number,
  source = kid,
): Promise<SigningKey> {
  if (privateKey.type !== 'private') throw new KeyLoadError(`${source}: not a private key`);
  const type = privateKey.asymmetricKeyType;
  const curve = privateKey.asymmetricKeyDetails?.namedCurve;
  let alg: SigningAlgorithm;
  if (type === 'ed25519') alg = 'EdDSA';
  else if (type === 'ec' && curve === 'prime256v1') alg = 'ES256';
  else
    throw new KeyLoadError(
      `${source}: unsupported key type ${type}${curve ? ` (${curve})` : ''}; use Ed25519 or P-256`,
    );
  return { kid, alg, createdAt, privateKey, publicKey: createPublicKey(privateKey) };
}

async function buildKeySet(keys: SigningKey[]): Promise<KeySet> {
  const jwks: JWK[] = [];
  for (const key of keys) {
    jwks.push({ ...(await exportJWK(key.publicKey)), kid: key.kid, alg: key.alg, use: 'sig' });
  }
  return {
    signing: keys[keys.length - 1] as SigningKey,
    byKid: new Map(keys.map((k) => [k.kid, k])),
    jwks: { keys: jwks },
  };
}
