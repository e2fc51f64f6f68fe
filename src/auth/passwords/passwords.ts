/**
 * Password hashing with bcryptjs. Behind an interface so the hashing can move
 * to a worker pool without its callers noticing.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import bcrypt from 'bcryptjs';
import { GatewayError } from '../../errors.js';
import { basicCanCarryPassword } from '../credentials/basic.js';
import { BcryptPool } from './bcrypt-pool.js';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /**
   * Constant work whether or not `hash` is given: pass undefined for unknown
   * users. `signal` abandons the work when the client has gone away, so a
   * caller cannot queue bcrypt work and hang up.
   * @throws GatewayError `invalid_request` when aborted.
   */
  verify(password: string, hash: string | undefined, signal?: AbortSignal): Promise<boolean>;
  /** True when `hash` was made at a lower cost than configured. */
  needsRehash(hash: string): boolean;
  /** Jobs queued or running (metrics). */
  queueDepth(): number;
}

export const PASSWORD_MIN_BYTES = 8;
/** bcrypt reads at most 72 bytes; a longer password would be silently truncated. */
export const PASSWORD_MAX_BYTES = 72;

/**
 * @throws GatewayError `invalid_request` when the password is outside 8..72
 * bytes, or is one HTTP Basic could not carry back (control characters,
 * unpaired surrogates): the account could never log in.
 */
export function checkPasswordPolicy(password: string): void {
  if (!basicCanCarryPassword(password)) {
    throw new GatewayError(
      'invalid_request',
      'The password must not contain control characters or unpaired surrogates (HTTP Basic could not carry it).',
    );
  }
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < PASSWORD_MIN_BYTES || bytes > PASSWORD_MAX_BYTES) {
    throw new GatewayError(
      'invalid_request',
      `The password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes long.`,
    );
  }
}

export function isBcryptHash(value: string): boolean {
  return /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/.test(value);
}

/** One less than the cores, at least one: the event loop keeps a core. */
export function defaultPasswordThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

export interface BcryptPoolOptions {
  cost: number;
  /**
   * Worker threads; default: one less than the cores, at least one. A login
   * is pure CPU: with every core hashing, proxied requests would wait for one.
   */
  threads?: number;
  /** Told how long each job waited for a thread (metrics). */
  onWait?: (seconds: number) => void;
  /** Starts a span for a password check, wait included; undefined when untraced. */
  step?: (name: string) => ((error?: unknown) => void) | undefined;
  /**
   * Start the threads and make the dummy hash at the first hash or check,
   * not now: for a CLI command, which may never hash (`user list`). A
   * serving process starts them at once, so that its first login of an
   * unknown e-mail costs what any other login costs.
   */
  lazy?: boolean;
  /**
   * Told of an error the pool raised outside any job — a compare's result
   * arriving after its client left and the job was dropped (piscina reports
   * that as "Unexpected message from Worker"). Never thrown: an unheard
   * pool error would end the process.
   */
  onPoolError?: (err: Error) => void;
}

/**
 * bcrypt in a worker-thread pool (piscina) sized to the cores: a login costs
 * ~90 ms of CPU at cost 10, which on the event loop would stall every proxied
 * request for that long. The pool, and the FIFO queue in front of it, are
 * `bcrypt-pool.ts`.
 *
 * The pool (and its first thread) starts here, unless `lazy`.
 */
export async function createBcryptHasher(
  options: BcryptPoolOptions,
): Promise<PasswordHasher & { close(): Promise<void> }> {
  const { cost } = options;
  const pool = new BcryptPool(options.threads ?? defaultPasswordThreads(), options);
  const hash = (password: string): Promise<string> =>
    pool.run({ password, cost }, { name: 'hash' });
  const compare = (password: string, against: string, signal?: AbortSignal) =>
    compareIn(pool, options.step, password, against, signal);
  // Compared against when the e-mail is unknown, so that a miss costs the same
  // bcrypt work as a hit and response times do not reveal which e-mails exist.
  let dummy: Promise<string> | undefined;
  const dummyHash = (): Promise<string> => (dummy ??= hash(`dummy-${randomUUID()}`));
  if (options.lazy !== true) await dummyHash();
  return {
    hash,
    async verify(password, stored, signal) {
      if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) {
        await compare('', stored ?? (await dummyHash()), signal);
        return false;
      }
      const ok = await compare(password, stored ?? (await dummyHash()), signal);
      return ok && stored !== undefined;
    },
    needsRehash: (stored) => bcrypt.getRounds(stored) < cost,
    queueDepth: () => pool.depth(),
    close: () => pool.close(),
  };
}

/** Whether `password` matches `against`, in a span when traced. @throws `invalid_request` when aborted */
async function compareIn(
  pool: BcryptPool,
  step: BcryptPoolOptions['step'],
  password: string,
  against: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const end = step?.('password.verify');
  try {
    // Queued: dropped by the queue when the signal fires. Running: the
    // pool ends the worker, so the thread is free at once.
    const ok = await pool.run<boolean>(
      { password, hash: against },
      { name: 'compare', signal: signal ?? null },
      signal,
    );
    end?.();
    return ok;
  } catch (err) {
    end?.(err);
    if ((err as Error).name === 'AbortError') {
      throw new GatewayError(
        'invalid_request',
        'The client went away before the password was checked.',
      );
    }
    throw err;
  }
}
