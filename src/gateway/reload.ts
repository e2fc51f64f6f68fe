/**
 * Reload: applies a new config to a running gateway, the same way for SIGHUP
 * (`serve`) and `POST /config/reload` (the admin listener). What each
 * top-level key does on a reload is decided here (`ON_RELOAD`).
 */
import type { Logger } from 'pino';
import type { RoleScopes } from '../auth/accounts.js';
import type { ApiKeys } from '../auth/clients/api-keys.js';
import type { LiveClientScopes } from '../auth/clients/client-scope-bounds.js';
import type { KeyRing } from '../auth/tokens/tokens.js';
import type { TokenVerifier } from '../auth/tokens/verified-tokens.js';
import type { GatewayConfig } from '../config/index.js';
import type { Metrics } from '../ops/metrics.js';
import type { Forwarder } from '../proxy/forward/forwarder.js';
import { settingsOf, type LiveSettings } from './proxy-settings.js';

/**
 * What a reload does with each top-level config key: applies it at once
 * (`live`), or keeps the old value and names the key in `needsRestart`. The
 * type makes a key added to the schema a compile error until it is decided
 * here; test/ops/reload-keys.redis.test.ts shows each live key taking effect.
 * docs/operations.md ("Reload") lists them.
 */
export const ON_RELOAD: Readonly<Record<keyof GatewayConfig, 'live' | 'restart'>> = {
  // The metadata and the sign-in are built with it.
  publicUrl: 'restart',
  listen: 'restart',
  admin: 'restart',
  forwardAuth: 'restart',
  store: 'restart',
  seed: 'restart', // applied at start only
  // The token verifier and issuer keep the settings they were built with; the
  // key directory itself is re-read on every reload (same `tokens.keys`).
  tokens: 'restart',
  revocation: 'restart',
  signup: 'restart',
  // The mailer (its SMTP connection pool) is built at start.
  mail: 'restart',
  // The second-factor routes and checks are built at start.
  mfa: 'restart',
  passwords: 'restart',
  limits: 'restart',
  audit: 'restart',
  server: 'restart',
  upstreamPool: 'restart',
  rateLimits: 'restart',
  trustedProxies: 'live',
  identityHeaders: 'live',
  stripHeaders: 'live',
  routes: 'live',
  // The roles' scopes go into tokens issued from the reload on; tokens issued
  // before keep theirs until they expire (a role change, not a config change,
  // is what ends a member's tokens). `clientScopes` and `roles.admin` bound
  // machine clients' next tokens and their API keys at once.
  authorization: 'live',
  // The request path is built with or without keys.
  apiKeys: 'restart',
  // The sealing key is read at start; the IdP records are read from the store;
  // the provider fetcher (its CA, timeouts) and key cache are built at start.
  sso: 'restart',
  // The cookie, the timeouts and the sign-in routes are built at start.
  sessions: 'restart',
  cors: 'live',
  log: 'restart',
  tracing: 'restart',
  readiness: 'live', // read at each /readyz
  demo: 'restart', // the echo upstream is started by `serve`
  shutdown: 'restart',
};

/** Config keys a reload cannot apply to a running process. */
export const RESTART_KEYS = (Object.keys(ON_RELOAD) as (keyof GatewayConfig)[]).filter(
  (key) => ON_RELOAD[key] === 'restart',
);

/** How a reload from the file ended: applied (naming the keys that need a restart), or refused. */
export type ReloadResult = { ok: true; needsRestart: string[] } | { ok: false; problems: string[] };

export interface Reload {
  /**
   * Applies a new config: routes (and their scopes), roles' scopes, tenant rules, CORS, identity and stripped
   * headers, trusted proxies, readiness and signing keys change at once,
   * without dropping connections. Every other top-level key that changed
   * keeps its old value and is reported in `needsRestart` (`ON_RELOAD`).
   * Throws, changing nothing, when the new settings cannot be built.
   */
  apply(config: GatewayConfig): Promise<{ needsRestart: string[] }>;
  /**
   * Re-reads the config file (when the gateway was given one) and applies
   * it; an invalid file keeps the old config. Logged and counted.
   */
  fromFile?: () => Promise<ReloadResult>;
}

export interface ReloadDeps {
  live: LiveSettings;
  keyring: KeyRing;
  verifier: TokenVerifier;
  /** `authorization.roles`, read where tokens are issued. */
  roleScopes: RoleScopes;
  /** `authorization.clientScopes`, read where client tokens are issued and API keys admitted. */
  clientScopes: LiveClientScopes;
  /** The API keys kept (`apiKeys.enabled`): their scopes worked out again from the new bounds. */
  apiKeys: ApiKeys | undefined;
  forwarder: Forwarder;
  metrics: Metrics;
  log: Logger;
  /** Reads `listen.tls`'s files again into the main listener; absent without TLS (`main-listener.ts`). */
  reloadTls?: (() => void) | undefined;
  /** Reads the config file again; absent when the gateway runs on no file. */
  readConfig?: (() => Promise<GatewayConfig>) | undefined;
}

export function createReload(deps: ReloadDeps): Reload {
  const { live, keyring, verifier, roleScopes, forwarder, metrics, log, readConfig } = deps;
  const apply: Reload['apply'] = async (next) => {
    const current = live.config;
    const needsRestart = RESTART_KEYS.filter(
      (key) => JSON.stringify(next[key]) !== JSON.stringify(current[key]),
    );
    const { trusted, proxy } = settingsOf(next);
    if (keyring.reload !== undefined && next.tokens.keys === current.tokens.keys)
      await keyring.reload();
    if (!needsRestart.includes('listen')) reloadCertificate(deps);
    verifier.clear();
    live.trusted = trusted;
    Object.assign(live.proxy, proxy);
    roleScopes.current = next.authorization.roles;
    // A machine client holds its scopes only as far as these allow (issue 42).
    deps.clientScopes.current = next.authorization.clientScopes;
    deps.apiKeys?.rebound();
    forwarder.retainUpstreams(
      proxy.routes.all.flatMap(({ upstream, tls }) =>
        upstream === undefined ? [] : [{ upstream, tls }],
      ),
    );
    live.config = { ...next, ...Object.fromEntries(needsRestart.map((k) => [k, current[k]])) };
    return { needsRestart };
  };
  if (readConfig === undefined) return { apply };
  const fromFile = async (): Promise<ReloadResult> => {
    try {
      const { needsRestart } = await apply(await readConfig());
      metrics.configReload(true);
      if (needsRestart.length > 0)
        log.warn({ needsRestart }, 'config reloaded; some keys need a restart');
      else log.info({}, 'config reloaded');
      return { ok: true, needsRestart };
    } catch (err) {
      metrics.configReload(false);
      log.error({ err }, 'config reload refused: the old config keeps serving');
      return { ok: false, problems: problemsOf(err) };
    }
  };
  return { apply, fromFile };
}

/**
 * The same `listen.tls` files, read again: a renewed certificate serves new
 * handshakes at once. One that cannot be used (unreadable, not PEM, a key
 * that does not match) keeps the old pair serving, logged with the reason
 * and counted; the rest of the reload goes on.
 */
function reloadCertificate(deps: Pick<ReloadDeps, 'reloadTls' | 'metrics' | 'log'>): void {
  if (deps.reloadTls === undefined) return;
  try {
    deps.reloadTls();
    deps.metrics.tlsReload(true);
    deps.log.info({}, 'listen.tls: certificate and key reloaded');
  } catch (err) {
    deps.metrics.tlsReload(false);
    deps.log.error(
      { cause: (err as Error).message },
      'listen.tls: the new certificate or key cannot be used; the old pair keeps serving',
    );
  }
}

/** SIGHUP: re-reads the config file and applies it, as `POST /config/reload` does. */
export async function reloadOnSignal(fromFile: Reload['fromFile'], log: Logger): Promise<void> {
  if (fromFile === undefined) {
    log.warn({}, 'SIGHUP: no config file to re-read (running on the built-in defaults)');
    return;
  }
  await fromFile();
}

function problemsOf(err: unknown): string[] {
  const problems = (err as { problems?: unknown }).problems;
  return Array.isArray(problems) ? problems.map(String) : [String((err as Error).message ?? err)];
}
