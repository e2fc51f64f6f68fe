/**
 * The core: the store, signing keys, passwords, sessions, token checks,
 * accounts and the audit recorder, built from a validated config. `serve`
 * wraps it in the gateway (`gateway.ts`); the CLI's store commands use it
 * alone, so this module and its imports stay clear of the serving path
 * (HTTP, Koa, metrics, tracing, the proxy): a command loads only what it runs.
 */
import type { Logger } from 'pino';
import { createAuditRecorder, type AuditRecorder } from './audit/recorder.js';
import { createAccounts, type Accounts } from './auth/accounts.js';
import { createAuthenticator, type Authenticate } from './auth/authenticate.js';
import { createBruteForceGuard, type BruteForceGuard } from './auth/brute-force.js';
import { confirmRevocations, type ConfirmationObserver } from './auth/confirmed-revocations.js';
import { loadKeySet } from './auth/keys.js';
import { createBcryptHasher, type PasswordHasher } from './auth/passwords.js';
import { createSessionGuard, type SessionGuard } from './auth/sessions.js';
import type { KeyRing } from './auth/tokens.js';
import { createTokenVerifier, type TokenVerifier } from './auth/verified-tokens.js';
import type { GatewayConfig } from './config/index.js';
import { timeStore, type StoreCallObserver, type TraceStep } from './ops/timed-store.js';
import { createMemoryStore, createRedisStore, redisForDisplay } from './store/index.js';
import type { Store } from './store/types.js';

/** The parts shared by `serve` and the CLI's admin commands. */
export interface Core {
  store: Store;
  keyring: KeyRing;
  passwords: PasswordHasher;
  accounts: Accounts;
  authenticate: Authenticate;
  sessions: SessionGuard;
  verifier: TokenVerifier;
  bruteForce: BruteForceGuard;
  /** Audit events: to the log and the store's streams (`config.audit` bounds them). */
  audit: AuditRecorder;
  /** Stops the session watch, the password pool and the store. */
  close(): Promise<void>;
}

/** What the core tells the metrics, when a gateway runs it (the CLI's commands pass none). */
export interface CoreObservers {
  storeCall: StoreCallObserver;
  passwordWait: (seconds: number) => void;
  /** Spans for store calls and password checks; undefined when tracing is off. */
  step?: TraceStep | undefined;
  /** A revocation confirmed by every lease holder (lease mode). */
  revocationConfirmed?: ConfirmationObserver;
  /** An audit event the store did not take. */
  auditWriteFailure?: () => void;
}

/**
 * `serving`: this process answers requests, so in lease mode it holds a
 * revocation lease; a CLI command only revokes (and waits for the holders).
 */
export async function createCore(
  config: GatewayConfig,
  log: Logger,
  observers?: CoreObservers,
  { serving = false }: { serving?: boolean } = {},
): Promise<Core> {
  const opened = await openStore(config, log);
  const timed =
    observers === undefined ? opened : timeStore(opened, observers.storeCall, observers.step);
  const lease = config.revocation.mode === 'lease';
  const store = lease
    ? confirmRevocations(timed, config.revocation.leaseMs, observers?.revocationConfirmed)
    : timed;
  const closers: (() => unknown)[] = [() => store.close()];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const keysDir = config.tokens.keys;
    const keyring: KeyRing = { current: await loadKeySet(keysDir, log) };
    if (keysDir !== undefined) {
      keyring.reload = async () => {
        keyring.current = await loadKeySet(keysDir, log, { reloading: true });
      };
    }
    const passwords = await createBcryptHasher({
      cost: config.passwords.bcryptCost,
      ...(config.passwords.workers === undefined ? {} : { threads: config.passwords.workers }),
      lazy: !serving,
      // Not the error's text: a stray result is in it.
      onPoolError: (err) =>
        log.warn({ error: err.name }, 'password pool: a result or error outside any job, ignored'),
      ...(observers === undefined ? {} : { onWait: observers.passwordWait, step: observers.step }),
    });
    closers.push(() => passwords.close());
    const sessions = createSessionGuard(store, {
      ...config.tokens,
      leaseMs: lease && serving ? config.revocation.leaseMs : undefined,
    });
    closers.push(() => sessions.close());
    const verifier = createTokenVerifier(keyring, config.tokens, { log });
    const bruteForce = createBruteForceGuard(store, config.limits);
    const accounts = createAccounts({
      store,
      passwords,
      keyring,
      tokens: config.tokens,
      cloudRegion: config.signup.cloudRegion,
      bruteForce,
    });
    const authenticate = createAuthenticator({ tokens: verifier, sessions });
    const { maxEventsPerStream, maxAgeDays } = config.audit;
    const audit = createAuditRecorder({
      streams: store.auditLog({
        maxEventsPerStream,
        maxAgeSeconds: maxAgeDays === undefined ? undefined : maxAgeDays * 86_400,
      }),
      log,
      ...(observers?.auditWriteFailure === undefined
        ? {}
        : { onWriteFailure: observers.auditWriteFailure }),
    });
    return {
      store,
      keyring,
      passwords,
      accounts,
      authenticate,
      sessions,
      verifier,
      bruteForce,
      audit,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The configured store: Redis, else the in-memory one (with a warning). */
async function openStore(config: GatewayConfig, log: Logger): Promise<Store> {
  const redis = config.store.redis;
  if (redis === undefined) {
    log.warn(
      {},
      'store.redis is not set: using the in-memory store; data is lost on exit and not shared',
    );
    return createMemoryStore();
  }
  const store = await createRedisStore(redis);
  log.info({ redis: redisForDisplay(redis), keyPrefix: redis.keyPrefix }, 'store connected');
  return store;
}
