/**
 * The proxy settings (route table, header policy, CORS of the identity
 * endpoints), built by one function at start and on every reload, and the
 * live state a reload swaps: the config now applied and its trust check.
 */
import type { Logger } from 'pino';
import { preSessionCookieName } from '../api/sign-in/form-token.js';
import type { GatewayConfig } from '../config/index.js';
import { sessionCookieName } from '../config/schema/sessions.js';
import type { ProxySettings } from '../http/dispatch.js';
import { compileCors } from '../proxy/decide/cors.js';
import { createHeaderPolicy } from '../proxy/decide/header-policy.js';
import { createRequestOrigin } from '../proxy/decide/request-origin.js';
import { compileRoutes } from '../proxy/decide/routes.js';
import { createTrustCheck, type TrustCheck } from '../proxy/decide/trusted-proxies.js';
import { knowHeaderNames } from '../proxy/forward/undici-header-names.js';

/** What a reload changes in place: the handlers hold these objects, never copies. */
export interface LiveSettings {
  /** The config applied now (restart-only keys keep their values from the start). */
  config: GatewayConfig;
  /** Whether a peer is a trusted proxy (`trustedProxies`). */
  trusted: TrustCheck;
  /** The request handler's settings: a reload replaces their fields. */
  proxy: ProxySettings;
}

/** The proxy settings of `config`: throws what `compileRoutes` refuses (a TLS file that cannot be read). */
export function buildProxySettings(config: GatewayConfig, trusted: TrustCheck): ProxySettings {
  const headers = createHeaderPolicy(
    config.identityHeaders,
    trusted,
    config.stripHeaders,
    config.apiKeys.enabled ? config.apiKeys.header : undefined,
    config.sessions.enabled ? sessionCookieName(config.sessions) : undefined,
    config.sessions.enabled ? preSessionCookieName(config.sessions) : undefined,
  );
  // Checked once here instead of by undici on every forwarded request.
  knowHeaderNames(headers.setNames);
  return {
    routes: compileRoutes(config.routes, reservedCookies(config)),
    headers,
    origin: createRequestOrigin(trusted, config.publicUrl),
    apiCors: config.cors === undefined ? undefined : compileCors(config.cors),
  };
}

/** The gateway's own cookies, lower-cased: no upstream may set them. */
function reservedCookies(config: GatewayConfig): ReadonlySet<string> | undefined {
  if (!config.sessions.enabled) return undefined;
  return new Set(
    [sessionCookieName(config.sessions), preSessionCookieName(config.sessions)].map((name) =>
      name.toLowerCase(),
    ),
  );
}

/** The live state of the config a gateway starts with; warns of routes whose upstream is not verified. */
export function startSettings(config: GatewayConfig, log: Logger): LiveSettings {
  const live = { config, ...settingsOf(config) };
  for (const route of config.routes) {
    if (route.tls?.insecureSkipVerify === true)
      log.warn(
        { route: route.prefix, upstream: route.upstream },
        'routes[].tls.insecureSkipVerify: this upstream is not verified; anyone on the path can read and change its traffic',
      );
  }
  return live;
}

/** The trust check and proxy settings of `config`, to apply to a live state at once. */
export function settingsOf(config: GatewayConfig): Omit<LiveSettings, 'config'> {
  const trusted = createTrustCheck(config.trustedProxies);
  return { trusted, proxy: buildProxySettings(config, trusted) };
}
