/**
 * A route's `rateLimit`, compiled once per (re)load: one policy per side,
 * and the `RateLimit-Policy` header value it advertises
 * (draft-ietf-httpapi-ratelimit-headers-11, structured-field form).
 */
import type { RouteConfig } from '../../config/index.js';

export type RateLimitSide = 'tenant' | 'user';

export interface RatePolicy {
  limit: RateLimitSide;
  /** The route's label, for metrics. */
  route: string;
  /**
   * Route, side, rate and burst: the buckets of a policy live on across a
   * reload that keeps it, and start fresh when any of these changes.
   */
  key: string;
  ratePerSecond: number;
  burst: number;
}

export interface RouteRateLimit {
  policies: readonly RatePolicy[];
  /** `"tenant";q=100;w=1, "user";q=20;w=1` */
  policyHeader: string;
}

export function compileRateLimit(
  label: string,
  config: RouteConfig['rateLimit'],
): RouteRateLimit | undefined {
  if (config === undefined) return undefined;
  const policies: RatePolicy[] = [];
  const sides = [
    ['tenant', config.perTenant],
    ['user', config.perUser],
  ] as const;
  for (const [limit, bucket] of sides) {
    if (bucket === undefined) continue;
    const { requestsPerSecond, burst } = bucket;
    policies.push({
      limit,
      route: label,
      key: `${encodeURIComponent(label)}:${limit}:${requestsPerSecond}:${burst}`,
      ratePerSecond: requestsPerSecond,
      burst,
    });
  }
  return { policies, policyHeader: policies.map(policyItem).join(', ') };
}

/**
 * The policy as quota per window: the draft's `q` is an integer, so a rate
 * below one per second is told as one request per so many seconds.
 */
function policyItem(policy: RatePolicy): string {
  const rate = policy.ratePerSecond;
  const [quota, window] = rate >= 1 ? [Math.floor(rate), 1] : [1, Math.ceil(1 / rate)];
  return `"${policy.limit}";q=${quota};w=${window}`;
}
