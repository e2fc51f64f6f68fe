/** Scenario 1's targets: the proxies measured side by side (`npm run bench`). */
/**
 * Scenario 1's targets, in the order they are measured in every round.
 * The optional ones (the C peers) run only where their binary is installed.
 */
export const TARGETS = [
  { key: 'direct', name: 'direct upstream' },
  { key: 'nginx', name: 'nginx (keep-alive, 1 worker)' },
  { key: 'haproxy', name: 'HAProxy jwt_verify (1 thread)' },
  { key: 'bare', name: 'bare http-proxy-3' },
  { key: 'koa', name: 'bare http-proxy-3 in Koa' },
  /**
   * The bare proxy doing exactly the gateway's header work (identity headers,
   * X-Request-Id, X-Forwarded-*) and nothing else: between it and the bare
   * proxy, what DESIGN §2 step 3 costs; between it and the gateway, what
   * authentication, tenant checks, metrics and timeouts cost.
   */
  { key: 'headers', name: 'bare http-proxy-3 + headers' },
  { key: 'undici', name: 'bare undici' },
  { key: 'gateway', name: 'gateway' },
] as const;

export type TargetKey = (typeof TARGETS)[number]['key'];
