/**
 * Tenants' identity providers (`sso`): the HTTPS fetcher that reaches them,
 * their key cache by issuer, and the token exchange and the browser sign-in
 * on top. Nothing when
 * `sso.enabled` is false; the fetcher's connections are closed by the undo.
 */
import { createBrowserSignIn, type BrowserSignIn } from '../auth/federation/browser-sign-in.js';
import { createTokenExchange, type ExchangeToken } from '../auth/federation/exchange.js';
import { createProviderHttp } from '../auth/federation/https-json.js';
import { createIssuerKeys } from '../auth/federation/issuer-keys.js';
import { createProviderDiscovery } from '../auth/federation/provider-discovery.js';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { built, type Built } from './builders.js';

export interface Federation {
  exchangeToken: ExchangeToken;
  browserSignIn: BrowserSignIn;
}

export function buildFederation(config: GatewayConfig, core: Core): Built<Federation | undefined> {
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
  return built({ exchangeToken: exchange, browserSignIn }, () => http.close());
}
