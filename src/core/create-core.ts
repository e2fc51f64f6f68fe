/**
 * The core: the store, signing keys, passwords, sessions, token checks,
 * accounts and the audit recorder, built from a validated config. `serve`
 * wraps it in the gateway (`gateway.ts`); the CLI's store commands use it
 * alone, so this module and its imports stay clear of the serving path
 * (HTTP, Koa, metrics, tracing, the proxy): a command loads only what it runs.
 */
import type { Logger } from 'pino';
import { createAuditRecorder, type AuditRecorder } from '../audit/recorder.js';
import {
  createAccounts,
  type AccountDeps,
  type Accounts,
  type RoleScopes,
} from '../auth/accounts.js';
import {
  createApiKeys,
  type ApiKeyOptions,
  type ApiKeys,
  type EndedCredential,
} from '../auth/clients/api-keys.js';
import { createAuthenticator, type Authenticate } from '../auth/credentials/authenticate.js';
import type { LiveClientScopes } from '../auth/clients/client-scope-bounds.js';
import { createBruteForceGuard, type BruteForceGuard } from '../auth/passwords/brute-force.js';
import {
  confirmRevocations,
  type ConfirmationObserver,
} from '../auth/revocation/confirmed-revocations.js';
import { createTxtLookup, type TxtLookup } from '../auth/federation/dns-txt.js';
import { loadKeySet } from '../auth/tokens/keys.js';
import { createBcryptHasher, type PasswordHasher } from '../auth/passwords/passwords.js';
import { loadSecretSealer, type SecretSealer } from '../auth/federation/sealed-secrets.js';
import {
  createRequestAuthenticator,
  type AuthenticateRequest,
} from '../auth/credentials/request-credentials.js';
import { createSessionGuard, type SessionGuard } from '../auth/revocation/sessions.js';
import type { BrowserSessions } from '../auth/sessions/browser-sessions.js';
import {
  createBrowserSessions,
  type BrowserSessionDeps,
} from '../auth/sessions/session-service.js';
import type { KeyRing } from '../auth/tokens/tokens.js';
import { createTokenVerifier, type TokenVerifier } from '../auth/tokens/verified-tokens.js';
import type { GatewayConfig } from '../config/index.js';
import { totpKeyFile } from '../config/schema/mfa.js';
import {
  createSecondFactors,
  type SecondFactorDeps,
  type SecondFactors,
} from '../auth/factors/second-factor.js';
import { createMailer, type Mailer, type MailKind, type MailOutcome } from '../mail/mailer.js';
import { timeStore, type StoreCallObserver, type TraceStep } from '../ops/timed-store.js';
import { createMemoryStore } from '../store/memory-store.js';
import { redisForDisplay } from '../store/redis-display.js';
import type { Store } from '../store/types.js';

/** The parts shared by `serve` and the CLI's admin commands. */
export interface Core {
  store: Store;
  keyring: KeyRing;
  passwords: PasswordHasher;
  accounts: Accounts;
  /** The scopes of each role in new tokens (`authorization.roles`): a reload replaces `current`. */
  roleScopes: RoleScopes;
  /** `authorization.clientScopes`, bounding what a machine client holds: a reload replaces `current`. */
  clientScopes: LiveClientScopes;
  /** Bearer tokens: the api's Bearer endpoints. */
  authenticate: Authenticate;
  /** Routes and forward-auth: bearer tokens, and API keys where `apiKeys.enabled`. */
  authenticateRequest: AuthenticateRequest;
  /** A serving gateway's API keys (`apiKeys.enabled`); undefined otherwise. */
  apiKeys: ApiKeys | undefined;
  sessions: SessionGuard;
  /**
   * Browser sessions (issue 44): begun by the sign-in page, recognised on
   * `auth: session` routes, ended by sign-out, the sessions API and the CLI.
   * Built whatever `sessions.enabled` says: the CLI lists and ends sessions
   * of a store whose gateways have them on.
   */
  browserSessions: BrowserSessions;
  verifier: TokenVerifier;
  bruteForce: BruteForceGuard;
  /** Audit events: to the log and the store's streams (`config.audit` bounds them). */
  audit: AuditRecorder;
  /**
   * Seals and opens tenants' IdP client secrets (`sso.secretsKeyFile`);
   * undefined when no key is configured (a secret is then refused).
   */
  idpSecrets: SecretSealer | undefined;
  /**
   * Users' second factors at login (`mfa.totp.enabled`): `X-OTP` and the
   * sign-in page's code step; undefined when TOTP is off (no code is asked).
   */
  secondFactors: SecondFactors | undefined;
  /** TXT records for tenants' domain verification, through `sso.dnsServers` (else the system's). */
  lookupTxt: TxtLookup;
  /**
   * A serving gateway's outgoing mail (`mail`); undefined without `mail` or
   * in a CLI command (no command sends mail).
   */
  mailer: Mailer | undefined;
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
  /** A mail sent or given up. */
  mail?: (kind: MailKind, outcome: MailOutcome) => void;
}

/** How the core is built besides its config. */
export interface CoreOptions {
  /**
   * This process answers requests, so in lease mode it holds a revocation
   * lease; a CLI command only revokes (and waits for the holders).
   */
  serving?: boolean;
  /** Unix milliseconds for browser sessions' timeouts; the system clock when omitted (tests move it). */
  clock?: () => number;
}

export async function createCore(
  config: GatewayConfig,
  log: Logger,
  observers?: CoreObservers,
  { serving = false, clock }: CoreOptions = {},
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
    const keyring = await keyringOf(config, log);
    const idpSecrets = await idpSecretsOf(config);
    const passwords = await passwordsOf(config, log, observers, serving);
    closers.push(() => passwords.close());
    const audit = auditOf(config, store, log, observers);
    const secondFactors = await secondFactorsOf(config, { store, audit }, clock);
    const sessions = createSessionGuard(store, {
      ...config.tokens,
      leaseMs: lease && serving ? config.revocation.leaseMs : undefined,
      onClientEnded: serving
        ? (claims) =>
            recordEnded(audit, {
              clientId: claims.client_id as string,
              tenantId: claims.tenant_id,
              jti: claims.jti,
            })
        : undefined,
    });
    closers.push(() => sessions.close());
    const verifier = createTokenVerifier(keyring, config.tokens, { log });
    const bruteForce = createBruteForceGuard(store, config.limits);
    const { accounts, roleScopes } = accountsOf(config, { store, passwords, keyring, bruteForce });
    const authenticate = createAuthenticator({ tokens: verifier, sessions });
    const clientScopes: LiveClientScopes = { current: config.authorization.clientScopes };
    const apiKeys =
      serving && config.apiKeys.enabled
        ? apiKeysOf({ store, sessions, bounds: { roleScopes, clientScopes } }, audit)
        : undefined;
    if (apiKeys !== undefined) closers.push(() => apiKeys.close());
    const authenticateRequest = createRequestAuthenticator(authenticate, apiKeys);
    const mailer = serving ? await mailerOf(config, log, observers, closers) : undefined;
    const browserSessions = browserSessionsOf(
      config,
      { store, guard: sessions, roleScopes, audit, log },
      clock,
    );
    return {
      store,
      keyring,
      passwords,
      accounts,
      roleScopes,
      clientScopes,
      authenticate,
      authenticateRequest,
      apiKeys,
      sessions,
      browserSessions,
      verifier,
      bruteForce,
      audit,
      idpSecrets,
      secondFactors,
      lookupTxt: txtLookupOf(config),
      mailer,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The sealer of `sso.secretsKeyFile`; undefined without one. */
async function idpSecretsOf(config: GatewayConfig): Promise<SecretSealer | undefined> {
  const file = config.sso.secretsKeyFile;
  return file === undefined ? undefined : loadSecretSealer(file);
}

/** The TOTP check of `mfa.totp` (its key: `mfa.totp.secretsKeyFile`, else `sso.secretsKeyFile`); undefined when off. */
async function secondFactorsOf(
  config: GatewayConfig,
  parts: Pick<SecondFactorDeps, 'store' | 'audit'>,
  clock: (() => number) | undefined,
): Promise<SecondFactors | undefined> {
  const key = totpKeyFile(config);
  if (!config.mfa.totp.enabled || key === undefined) return undefined;
  return createSecondFactors({
    ...parts,
    sealer: await loadSecretSealer(key.file, key.setting),
    setting: key.setting,
    limits: config.limits.secondFactor,
    clock: clock ?? Date.now,
    issuer: config.tokens.issuer,
  });
}

/** The mailer of `mail`; undefined without it (nodemailer is then not loaded). */
async function mailerOf(
  config: GatewayConfig,
  log: Logger,
  observers: CoreObservers | undefined,
  closers: (() => unknown)[],
): Promise<Mailer | undefined> {
  if (config.mail === undefined) return undefined;
  const { createSmtpTransport } = await import('../mail/smtp-transport.js');
  const transport = createSmtpTransport(config.mail);
  const mailer = createMailer({ config: config.mail, log, onOutcome: observers?.mail, transport });
  closers.push(() => mailer.close());
  return mailer;
}

/** The bcrypt pool of `passwords` (started at once when serving, else at its first use). */
function passwordsOf(
  config: GatewayConfig,
  log: Logger,
  observers: CoreObservers | undefined,
  serving: boolean,
): ReturnType<typeof createBcryptHasher> {
  return createBcryptHasher({
    cost: config.passwords.bcryptCost,
    ...(config.passwords.workers === undefined ? {} : { threads: config.passwords.workers }),
    lazy: !serving,
    // Not the error's text: a stray result is in it.
    onPoolError: (err) =>
      log.warn({ error: err.name }, 'password pool: a result or error outside any job, ignored'),
    ...(observers === undefined ? {} : { onWait: observers.passwordWait, step: observers.step }),
  });
}

/** Browser sessions on `sessions`' timeouts, judged by the core's session guard. */
function browserSessionsOf(
  config: GatewayConfig,
  parts: Pick<BrowserSessionDeps, 'store' | 'guard' | 'roleScopes' | 'audit' | 'log'>,
  clock: (() => number) | undefined,
): BrowserSessions {
  return createBrowserSessions({
    ...parts,
    config: config.sessions,
    tokens: config.tokens,
    ...(clock === undefined ? {} : { clock }),
  });
}

/** Domain verification's DNS: `sso.dnsServers` (else the system's), `sso.timeoutMs` a query. */
function txtLookupOf(config: GatewayConfig): TxtLookup {
  return createTxtLookup({ servers: config.sso.dnsServers, timeoutMs: config.sso.timeoutMs });
}

/** The signing keys of `tokens.keys` (re-read on reload), or an ephemeral one. */
async function keyringOf(config: GatewayConfig, log: Logger): Promise<KeyRing> {
  const keysDir = config.tokens.keys;
  const keyring: KeyRing = { current: await loadKeySet(keysDir, log) };
  if (keysDir !== undefined) {
    keyring.reload = async () => {
      keyring.current = await loadKeySet(keysDir, log, { reloading: true });
    };
  }
  return keyring;
}

/** A serving gateway's API keys, a use after one ended recorded as an audit event. */
function apiKeysOf(options: Omit<ApiKeyOptions, 'onEnded'>, audit: AuditRecorder): ApiKeys {
  return createApiKeys({ ...options, onEnded: (ended) => recordEnded(audit, ended) });
}

/**
 * A machine client's credential presented after it ended (its client removed
 * or rotated, its key removed): `revoked_credential_used`, in its tenant's
 * stream. The actor is the client the credential named.
 */
function recordEnded(audit: AuditRecorder, ended: EndedCredential): void {
  void audit.record(
    'revoked_credential_used',
    { source: 'api', actor: ended.clientId },
    { tenant_id: ended.tenantId, client_id: ended.clientId, key_id: ended.keyId, jti: ended.jti },
  );
}

function auditOf(
  config: GatewayConfig,
  store: Store,
  log: Logger,
  observers: CoreObservers | undefined,
): AuditRecorder {
  const { maxEventsPerStream, maxAgeDays } = config.audit;
  return createAuditRecorder({
    streams: store.auditLog({
      maxEventsPerStream,
      maxAgeSeconds: maxAgeDays === undefined ? undefined : maxAgeDays * 86_400,
    }),
    log,
    ...(observers?.auditWriteFailure === undefined
      ? {}
      : { onWriteFailure: observers.auditWriteFailure }),
  });
}

/** Accounts on the config's token settings, and the roles' scopes they issue (a reload replaces them). */
function accountsOf(
  config: GatewayConfig,
  parts: Pick<AccountDeps, 'store' | 'passwords' | 'keyring' | 'bruteForce'>,
): { accounts: Accounts; roleScopes: RoleScopes } {
  const roleScopes: RoleScopes = { current: config.authorization.roles };
  const accounts = createAccounts({
    ...parts,
    roles: roleScopes,
    tokens: config.tokens,
    cloudRegion: config.signup.cloudRegion,
  });
  return { accounts, roleScopes };
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
  // ioredis and the Redis store's modules (~0.3 s of CPU) load only for a Redis store.
  const { createRedisStore } = await import('../store/redis-store.js');
  const store = await createRedisStore(redis);
  log.info({ redis: redisForDisplay(redis), keyPrefix: redis.keyPrefix }, 'store connected');
  return store;
}
