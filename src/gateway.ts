/**
 * Composition root: builds the gateway's parts from a validated config, one
 * named builder after another (src/gateway/), and wires them together around
 * the core (`build-core.ts`). Each builder's undo joins one cleanup list, run in
 * reverse on a start that fails at any step and by `close`. Config is read
 * before this point and handed down; a reload hands down a new one.
 */
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { BrowserSessions } from './auth/sessions/browser-sessions.js';
import type { KeyRing } from './auth/tokens/tokens.js';
import type { GatewayConfig } from './config/index.js';
import type { Store } from './store/types.js';
import { built, stepsOn, type BeforeStep } from './gateway/builders.js';
import { createCleanup } from './gateway/cleanup.js';
import { buildCore, seedStore } from './gateway/build-core.js';
import { drainThenClose } from './gateway/drain.js';
import { buildExtAuthz, type ExtAuthz } from './gateway/ext-authz.js';
import { buildFederation } from './gateway/federation.js';
import { buildHandlers } from './gateway/handlers.js';
import { loadPasskeyDeps } from './gateway/passkeys.js';
import { createListeners, type BoundAddresses, type Listeners } from './gateway/listeners.js';
import { startSettings } from './gateway/proxy-settings.js';
import { createReload, type Reload, type ReloadResult } from './gateway/reload.js';
import { buildMetrics, buildTracing, type Scraped } from './gateway/telemetry.js';
import {
  buildForwarder,
  buildLiveWebSockets,
  buildRateLimits,
  buildReadiness,
} from './gateway/traffic.js';

export type { ReloadResult } from './gateway/reload.js';

export interface Gateway {
  server: Server;
  /** The admin listener, when `admin` is configured. */
  adminServer?: Server;
  /** The forward-auth listener, when `forwardAuth` is configured. */
  forwardAuthServer?: Server;
  store: Store;
  keyring: KeyRing;
  /**
   * The browser sessions service of this gateway's core: what the sign-in
   * page begins sessions with (tests begin them so too).
   */
  browserSessions: BrowserSessions;
  /** Starts listening (the start's last step: a failure closes everything); resolves with the bound addresses. */
  listen(): Promise<BoundAddresses>;
  /** Applies a new config (`Reload.apply`). */
  reload: Reload['apply'];
  /** Re-reads the config file and applies it (`Reload.fromFile`), when the gateway was given one. */
  reloadFromFile?: () => Promise<ReloadResult>;
  /**
   * Graceful stop: readiness fails, no new connections, in-flight requests and
   * WebSockets get `drainMs` to finish, then everything is closed.
   */
  close(drainMs?: number): Promise<void>;
}

export interface GatewayOptions {
  /** Reads the config file again, for SIGHUP and `POST /config/reload`. */
  reloadConfig?: () => Promise<GatewayConfig>;
  /** Called before each named step of the start; throwing fails the start there (tests). */
  beforeStep?: BeforeStep;
  /** Unix milliseconds for browser sessions' timeouts and TOTP codes; the system clock when omitted (tests move it). */
  clock?: () => number;
}

export async function createGateway(
  config: GatewayConfig,
  log: Logger,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const cleanup = createCleanup();
  const step = stepsOn(cleanup, options.beforeStep);
  const scraped: Scraped = {};
  const metrics = await step('metrics', () => buildMetrics(scraped));
  const live = await step('proxy-settings', () => built(startSettings(config, log)));
  const tracing = await step('tracing', () =>
    buildTracing(config.tracing, () => live.trusted, log),
  );
  const core = await step('core', () => buildCore(config, log, metrics, tracing, options.clock));
  scraped.core = core;
  await step('seed', () => seedStore(config, core, log));
  const readiness = await step('readiness', () => buildReadiness(core, live));
  const rateLimits = await step('rate-limits', () => buildRateLimits(config, core, metrics, log));
  scraped.rateLimits = rateLimits;
  // Before the parts holding their connections: closed after them.
  const listeners = await step('listeners', () => createListeners(config, metrics, log));
  const forwarder = await step('forwarder', () => buildForwarder(config));
  const liveWebSockets = await step('websockets', () => buildLiveWebSockets(config, core));
  // Browser sessions reach the IdP sign-in and logouts only where they are on.
  const browserSessions = config.sessions.enabled ? core.browserSessions : undefined;
  const federation = await step('federation', () => buildFederation(config, core, browserSessions));
  const reload = await step('reload', () =>
    built(
      createReload({
        live,
        keyring: core.keyring,
        verifier: core.verifier,
        roleScopes: core.roleScopes,
        clientScopes: core.clientScopes,
        apiKeys: core.apiKeys,
        forwarder,
        metrics,
        log,
        reloadTls: listeners.mainListener.reloadTls,
        readConfig: options.reloadConfig,
      }),
    ),
  );
  const handlers = await step('handlers', async () =>
    built(
      buildHandlers({
        config,
        log,
        metrics,
        core,
        live,
        readiness,
        rateLimits,
        forwarder,
        liveWebSockets,
        reload,
        exchangeToken: federation?.exchangeToken,
        browserSignIn: federation?.browserSignIn,
        idpLogouts: federation,
        passkeys: await loadPasskeyDeps(config, core),
      }),
    ),
  );
  scraped.recorder = handlers.recorder;
  const extAuthz = await step('ext-authz', () => buildExtAuthz(config, handlers, log));
  listeners.attach(handlers.traffic, handlers.admin, tracing);
  const busy = () => handlers.recorder.inFlight() > 0 || forwarder.openWebSockets() > 0;
  return {
    server: listeners.main,
    ...(listeners.admin === undefined ? {} : { adminServer: listeners.admin }),
    ...(listeners.forwardAuth === undefined ? {} : { forwardAuthServer: listeners.forwardAuth }),
    store: core.store,
    keyring: core.keyring,
    browserSessions: core.browserSessions,
    listen: () => step('listen', () => listenAll(listeners, extAuthz)),
    reload: reload.apply,
    ...(reload.fromFile === undefined ? {} : { reloadFromFile: reload.fromFile }),
    close: (drainMs = 0) => drainThenClose({ readiness, listeners, busy, cleanup }, drainMs),
  };
}

/** Binds the listeners, then Envoy's gRPC ext_authz when it is on. */
async function listenAll(listeners: Listeners, extAuthz: ExtAuthz | undefined) {
  const bound = await listeners.listen();
  if (extAuthz !== undefined) bound.extAuthz = await extAuthz.listen();
  return built(bound);
}
