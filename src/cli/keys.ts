/**
 * `keys add | list | retire`: the signing keys in `tokens.keys`, a directory
 * every instance shares. The file whose name sorts last signs; every file
 * verifies. Instances see a change at their next reload (SIGHUP) or start.
 */
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { generateKeyFile, loadKeySet, type SigningKey } from '../auth/tokens/keys.js';
import type { LoadedConfig } from '../config/index.js';
import { cliIo } from './io.js';
import { UsageError } from './usage-error.js';

const print = (value: unknown) => cliIo().stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function keysDir(loaded: LoadedConfig): string {
  const dir = loaded.config.tokens.keys;
  if (dir === undefined) {
    throw new UsageError(
      'tokens.keys is not configured: the key is ephemeral, there is no key directory',
    );
  }
  return dir;
}

/** The directory's keys, never generating one (an empty directory is an error). */
async function keysIn(dir: string): Promise<SigningKey[]> {
  const set = await loadKeySet(dir, { warn: () => {} }, { reloading: true });
  return [...set.byKid.values()];
}

export async function keysAdd(loaded: LoadedConfig): Promise<void> {
  const file = await generateKeyFile(keysDir(loaded));
  print({ file, kid: basename(file, '.pem') });
}

/** kid, algorithm, creation time and which one signs; never any key material. */
export async function keysList(loaded: LoadedConfig): Promise<void> {
  const keys = await keysIn(keysDir(loaded));
  const signing = keys.at(-1)?.kid;
  print({
    keys: keys.map((k) => ({
      kid: k.kid,
      alg: k.alg,
      created_at: new Date(k.createdAt).toISOString(),
      signing: k.kid === signing,
    })),
  });
}

/**
 * Removes a key that no longer signs, once no token it signed can still be
 * valid: tokens stop being signed with a key when a newer one does (from the
 * newer key's creation, instances reloaded), and live `tokens.ttlSeconds`
 * plus the clock skew allowed. Earlier, it refuses and says when; `--now`
 * removes it at once (its tokens are then refused at the instances' next
 * reload). The signing key is never retired: add a newer one first.
 */
export async function keysRetire(
  loaded: LoadedConfig,
  kid: string,
  options: { now?: boolean },
  clock: () => number = Date.now,
): Promise<void> {
  const dir = keysDir(loaded);
  const keys = await keysIn(dir);
  const index = keys.findIndex((k) => k.kid === kid);
  if (index === -1) throw new UsageError(`no key ${kid} in ${dir}`);
  const successor = keys[index + 1];
  if (successor === undefined) {
    throw new UsageError(
      `${kid} signs new tokens: add a newer key (tenant-gateway keys add), reload every instance, then retire ${kid}`,
    );
  }
  const { ttlSeconds, clockSkewSeconds } = loaded.config.tokens;
  const safeFrom = successor.createdAt + (ttlSeconds + clockSkewSeconds) * 1000;
  if (options.now !== true && clock() < safeFrom) {
    throw new UsageError(
      `tokens signed by ${kid} may be valid until ${new Date(safeFrom).toISOString()}: retire it after then, or now with --now (those tokens are then refused)`,
    );
  }
  await rm(join(dir, `${kid}.pem`));
  print({
    retired: kid,
    file: join(dir, `${kid}.pem`),
    note: 'reload every instance (SIGHUP) to stop verifying with it',
  });
}
