/**
 * The request handlers: the identity API (Koa), the main and forward-auth
 * dispatcher and the admin listener's, with the request recorders that log
 * and count every request. They hold nothing open of their own.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { createApiApp } from '../api/app.js';
import { loadConsoleAssets } from '../api/console/console-assets.js';
import { createPublicOrigin } from '../api/public-origin.js';
import type { SignInDeps } from '../api/sign-in/deps.js';
import { createClientCredentials } from '../auth/clients/client-credentials.js';
import type { BrowserSignIn } from '../auth/federation/browser-sign-in.js';
import { createRefreshTokens } from '../auth/refresh/refresh-grant.js';
import type { ExchangeToken } from '../auth/federation/exchange.js';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import type { PasskeyDeps } from '../identity/passkey-deps.js';
import { sessionCookieName } from '../config/schema/sessions.js';
import { createAdminRequestHandler, createRequestHandler, scopeOf } from '../http/dispatch.js';
import type { Metrics } from '../ops/metrics.js';
import { createOpsHandler } from '../ops/ops-endpoints.js';
import type { Readiness } from '../ops/readiness.js';
import { createRequestRecorder, type RequestRecorder } from '../ops/request-recorder.js';
import {
  createSessionRequestAuthenticator,
  type AuthenticateSessionRequest,
} from '../auth/credentials/session-credentials.js';
import { createAdmit } from '../proxy/decide/admit.js';
import type { Admission } from '../proxy/decide/pipeline.js';
import type { RouteRateLimits } from '../proxy/rate-limits/route-rate-limits.js';
import { clientAddress } from '../proxy/decide/trusted-proxies.js';
import { originalRequestForLog } from '../proxy/decide/verify-request.js';
import type { Forwarder } from '../proxy/forward/forwarder.js';
import type { LiveWebSockets } from '../proxy/forward/live-websockets.js';
import type { LiveSettings } from './proxy-settings.js';
import type { Reload } from './reload.js';
import type { Federation } from './federation.js';
import { buildAccountMail } from './account-mail.js';

export interface HandlerDeps {
  config: GatewayConfig;
  log: Logger;
  metrics: Metrics;
  core: Core;
  live: LiveSettings;
  readiness: Readiness;
  rateLimits: RouteRateLimits;
  forwarder: Forwarder;
  liveWebSockets: LiveWebSockets;
  reload: Reload;
  /** The token exchange of tenants' identity providers' tokens (`sso.enabled`). */
  exchangeToken?: ExchangeToken | undefined;
  /** The browser sign-in through tenants' identity providers (`sso.enabled`). */
  browserSignIn?: BrowserSignIn | undefined;
  /** The IdP-side logouts (`sso.enabled`; back-channel with `sessions.enabled`). */
  idpLogouts?: Pick<Federation, 'endAtIdp' | 'backchannelLogout'> | undefined;
  /** Passkeys' deps (`mfa.passkeys.enabled`: `loadPasskeyDeps`). */
  passkeys?: PasskeyDeps | undefined;
}

export interface Handlers {
  /** The main listener's (HTTP and upgrades) and the forward-auth listener's. */
  traffic: ReturnType<typeof createRequestHandler>;
  /** What admits on the traffic listeners: Envoy's gRPC ext_authz asks the same (`ext-authz.ts`). */
  admission: Admission;
  /** The admin listener's, when `admin` is configured. */
  admin: ReturnType<typeof createAdminRequestHandler> | undefined;
  /** Records the main listener's requests: `inFlight` is what a drain waits for. */
  recorder: RequestRecorder;
}

export function buildHandlers(deps: HandlerDeps): Handlers {
  const { config, log, metrics, core, readiness } = deps;
  const clientIp = (peer: string | undefined, req: IncomingMessage) =>
    clientAddress(peer, req.headers['x-forwarded-for'], deps.live.trusted);
  const recording = { log, metrics, clientIp, originalRequest: originalRequestForLog };
  const recorder = createRequestRecorder({ ...recording, level: 'info' });
  const publicOrigin = createPublicOrigin(config.publicUrl, (peer) => deps.live.trusted(peer));
  const api = createApiApp({
    store: core.store,
    accounts: core.accounts,
    authenticate: core.authenticate,
    sessions: core.sessions,
    bruteForce: core.bruteForce,
    keyring: core.keyring,
    grantsConfig: config,
    oauthMetadata: {
      issuer: config.tokens.issuer,
      origin: publicOrigin,
      fixedOrigin: config.publicUrl !== undefined,
      scopesSupported: () => scopesSupported(deps.live.config.authorization),
    },
    publicOrigin,
    clientIp: (req) => clientIp(req.socket.remoteAddress, req),
    signupEnabled: config.signup.enabled,
    accountMail: buildAccountMail(config, core, log),
    bodyLimit: config.limits.bodyBytes,
    grantClientToken: createClientCredentials({ ...core, tokens: config.tokens }),
    refreshTokens: createRefreshTokens({ ...core, tokens: config.tokens }),
    onRefresh: (outcome) => metrics.refreshed(outcome),
    onTokenIssued: (kind) => metrics.tokenIssued(kind),
    ...(deps.exchangeToken === undefined ? {} : { exchangeToken: deps.exchangeToken }),
    ...(deps.browserSignIn === undefined ? {} : { browserSignIn: deps.browserSignIn }),
    onFederatedSignIn: (outcome) => metrics.federatedSignIn(outcome),
    onLoginRefused: (reason) => metrics.loginRefused(reason),
    audit: core.audit,
    scopeOf,
    clients: {
      store: core.store,
      audit: core.audit,
      clientScopes: () => deps.live.config.authorization.clientScopes,
      roles: core.roleScopes,
    },
    idpSecrets: core.idpSecrets,
    secondFactors: core.secondFactors,
    mfaRequiredForAdmins: config.mfa.requiredForAdmins,
    allowPrivateIssuers: config.sso.allowPrivateIssuers,
    lookupTxt: core.lookupTxt,
    auditLog: core.store.auditLog({ maxEventsPerStream: config.audit.maxEventsPerStream }),
    mailer: core.mailer,
    publicUrl: config.publicUrl,
    ...sessionApiDeps(deps),
  });
  const admission: Admission = {
    admit: createAdmit(
      core.authenticateRequest,
      config.apiKeys.enabled ? config.apiKeys.header : undefined,
      sessionRoutesAuthenticator(config, core),
    ),
    rateLimits: deps.rateLimits,
    settings: deps.live.proxy,
  };
  const traffic = createRequestHandler({
    recorder,
    api: api.callback(),
    console: config.console.enabled,
    // Never on the public listener unless asked for (`listen.opsEndpoints`).
    ...(config.listen.opsEndpoints
      ? { ops: createOpsHandler({ metrics, readiness, listener: 'listen' }) }
      : {}),
    forwardAuthHere: config.forwardAuth === undefined,
    bodyIdleMs: config.server.requestBodyIdleTimeoutMs,
    ...admission,
    settings: deps.live.proxy,
    forwarder: deps.forwarder,
    liveWebSockets: deps.liveWebSockets,
  });
  return { traffic, admission, admin: adminHandlerOf(deps, recording), recorder };
}

/** The admin listener's handler (`admin`), at the debug level; undefined without one. */
function adminHandlerOf(
  deps: HandlerDeps,
  recording: Omit<Parameters<typeof createRequestRecorder>[0], 'level'>,
): Handlers['admin'] {
  const { config, metrics, readiness } = deps;
  if (config.admin === undefined) return undefined;
  const fromFile = config.admin.configReload ? deps.reload.fromFile : undefined;
  return createAdminRequestHandler({
    recorder: createRequestRecorder({ ...recording, level: 'debug' }),
    ops: createOpsHandler({
      metrics,
      readiness,
      listener: 'admin',
      ...(fromFile === undefined ? {} : { reload: fromFile }),
    }),
  });
}

/**
 * What the identity API needs of browser sessions (`sessions.enabled`): the
 * sign-in page, the session cookie as a caller's credential, the company
 * sign-in and the back-channel logout.
 */
function sessionApiDeps(deps: HandlerDeps) {
  const { config, core, metrics } = deps;
  const backchannelLogout = deps.idpLogouts?.backchannelLogout;
  return {
    signIn: signInOf(config, core, metrics, deps),
    consoleAssets: config.console.enabled ? loadConsoleAssets() : undefined,
    sessionCookieName: sessionCookieName(config.sessions),
    passkeys: deps.passkeys,
    ...(config.sessions.enabled
      ? { browserSessions: core.browserSessions, sessionsConfig: config.sessions }
      : {}),
    ...(backchannelLogout === undefined ? {} : { backchannelLogout }),
  };
}

/**
 * What `auth: session` routes take while `sessions.enabled`: the session
 * cookie (`sessions.cookie.name`), when no bearer token or API key is sent.
 */
function sessionRoutesAuthenticator(
  config: GatewayConfig,
  core: Core,
): AuthenticateSessionRequest | undefined {
  if (!config.sessions.enabled) return undefined;
  return createSessionRequestAuthenticator(
    core.authenticateRequest,
    core.browserSessions,
    sessionCookieName(config.sessions),
  );
}

/** What a token of this gateway may carry: every role's scopes and the scopes clients may hold (RFC 8414 `scopes_supported`). */
function scopesSupported(authorization: GatewayConfig['authorization']): string[] {
  const roles = Object.values(authorization.roles).flat();
  return [...roles, ...(authorization.clientScopes ?? [])];
}

/** The sign-in page and the sign-out, with `sessions.enabled`; undefined otherwise (not routed). */
function signInOf(
  config: GatewayConfig,
  core: Core,
  metrics: Metrics,
  deps: HandlerDeps,
): SignInDeps | undefined {
  if (!config.sessions.enabled) return undefined;
  const endAtIdp = deps.idpLogouts?.endAtIdp;
  return {
    config: config.sessions,
    browserSessions: core.browserSessions,
    company: config.sso.enabled,
    passkeys: deps.passkeys !== undefined,
    passwordReset: core.mailer !== undefined,
    onSignIn: (outcome) => metrics.signIn(outcome),
    // RP-initiated logout reads the session's record (its IdP) before the sign-out ends it.
    ...(endAtIdp === undefined
      ? {}
      : {
          endAtIdp: async (session) => {
            const record = await core.store.browserSessions.getBrowserSession(session.sessionId);
            return record === null ? undefined : endAtIdp(record);
          },
        }),
  };
}
