/**
 * Tenants' identity providers (`sso`): the HTTPS fetcher that reaches them,
 * their key cache by issuer, and the token exchange and the browser sign-in
 * on top; with browser sessions (issue 44), the IdP-side logouts too:
 * back-channel logout and the RP-initiated logout URL. Nothing when
 * `sso.enabled` is false; the fetcher's connections are closed by the undo.
 */
import { backchannelLogout, type IdpLogout } from '../auth/federation/backchannel-logout.js';
import { createBrowserSignIn, type BrowserSignIn } from '../auth/federation/browser-sign-in.js';
import { createTokenExchange, type ExchangeToken } from '../auth/federation/exchange.js';
import { createProviderHttp } from '../auth/federation/https-json.js';
import { createIssuerKeys } from '../auth/federation/issuer-keys.js';
import { createProviderDiscovery } from '../auth/federation/provider-discovery.js';
import { createEndAtIdp, type EndAtIdp } from '../auth/federation/rp-logout.js';
import type { BrowserSessions } from '../auth/sessions/browser-sessions.js';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { built, type Built } from './builders.js';

export interface Federation {
  exchangeToken: ExchangeToken;
  browserSignIn: BrowserSignIn;
  /** RP-initiated logout's URL for a session begun at a tenant's IdP (the sign-out's hook). */
  endAtIdp: EndAtIdp;
  /** OIDC Back-Channel Logout; with browser sessions only. */
  backchannelLogout?: (
    logoutToken: string,
    seen: { tenantId?: string; issuer?: string },
  ) => Promise<IdpLogout>;
}

/** @param browserSessions the sessions service when `sessions.enabled` */
export function buildFederation(
  config: GatewayConfig,
  core: Core,
  browserSessions?: BrowserSessions,
): Built<Federation | undefined> {
  const { sso } = config;
  if (!sso.enabled) return built(undefined);
  const http = createProviderHttp({
    caFile: sso.ca,
    timeoutMs: sso.timeoutMs,
    allowPrivateAddresses: sso.allowPrivateIssuers,
    failureCacheMs: sso.failureCacheSeconds * 1000,
  });
  const discovery = createProviderDiscovery({
    http,
    maxAgeMs: sso.keysMaxAgeSeconds * 1000,
    failureCacheMs: sso.failureCacheSeconds * 1000,
    maxProviders: sso.maxProviders,
  });
  const keys = createIssuerKeys({
    http,
    discovery,
    timeoutMs: sso.timeoutMs,
    keysMaxAgeMs: sso.keysMaxAgeSeconds * 1000,
    unknownKeyCooldownMs: sso.unknownKeyCooldownSeconds * 1000,
    maxProviders: sso.maxProviders,
  });
  const exchange = createTokenExchange({
    store: core.store,
    accounts: core.accounts,
    keys,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
  });
  const browserSignIn = createBrowserSignIn({
    store: core.store,
    accounts: core.accounts,
    keys,
    http,
    sealer: core.idpSecrets,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    redirectUris: sso.redirectUris,
    discovery,
  });
  const endAtIdp = createEndAtIdp({
    idps: core.store.idps,
    discovery,
    publicOrigin: config.publicUrl,
  });
  const logoutDeps = {
    idps: core.store.idps,
    keys,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    sso: core.store.sso,
  };
  const logout =
    browserSessions === undefined
      ? {}
      : {
          backchannelLogout: (token: string, seen: { tenantId?: string; issuer?: string }) =>
            backchannelLogout({ ...logoutDeps, sessions: browserSessions }, token, seen),
        };
  return built({ exchangeToken: exchange, browserSignIn, endAtIdp, ...logout }, () => http.close());
}
