/**
 * One undici `Pool` per upstream origin: keep-alive connections, one request
 * at a time on each (pipelining 1), reused only after an exchange that ended
 * cleanly — undici closes a connection on anything unexpected (a response
 * nobody asked for, bytes arriving while it idles, a framing error, an
 * aborted request: issue 12's response-queue poisoning).
 *
 * In front of each pool, its {@link TenantSlots} (issue 12): the pool's
 * `connections` is `maxConnections`, and a request is dispatched only once it
 * holds one of as many slots, so undici never queues a request of its own
 * while a tenant is held to its share.
 */
import { Pool } from 'undici';
import type { buildConnector } from 'undici';
import {
  createTenantSlots,
  type SlotHolder,
  type SlotLimits,
  type TenantSlots,
} from './tenant-slots.js';

/** A request that waits for a slot of its origin, then is sent. */
export interface PooledRequest extends SlotHolder {
  send(): void;
}

/** Where a route's requests go: the origin's pool and what to put before each path. */
export interface UpstreamTarget {
  pool: Pool;
  /** The origin's connection slots, shared between tenants. */
  slots: TenantSlots<PooledRequest>;
  /** The route's upstream path, without a trailing slash (`''` for `/`). */
  pathPrefix: string;
  /** The route's upstream query (`a=1`), merged into every request's; `''` for none. */
  query: string;
}

export interface UpstreamPoolOptions {
  /** Connections per origin and each tenant's share of them (config `upstreamPool`). */
  limits: SlotLimits;
  /**
   * Per-origin connect options (TLS: CA, SNI, client certificate), asked
   * once when the origin's pool is made. The place for per-route TLS.
   */
  connectOptions?: (origin: URL) => buildConnector.BuildOptions | undefined;
}

export interface UpstreamPools {
  /** The target of an upstream URL; parsed and made once per distinct URL. */
  target(upstream: string): UpstreamTarget;
  /** Destroys every pool: requests in flight fail, idle connections close. */
  destroy(): Promise<void>;
}

export function createUpstreamPools(options: UpstreamPoolOptions): UpstreamPools {
  const pools = new Map<string, { pool: Pool; slots: TenantSlots<PooledRequest> }>();
  const targets = new Map<string, UpstreamTarget>();

  function poolOf(url: URL): { pool: Pool; slots: TenantSlots<PooledRequest> } {
    let found = pools.get(url.origin);
    if (found === undefined) {
      const connect = options.connectOptions?.(url);
      const pool = new Pool(url.origin, {
        connections: options.limits.maxConnections,
        pipelining: 1,
        // The route's timeout covers the wait for the response head; a
        // response body may be slow (a stream, a long poll) for as long as
        // the client reads it, as it could through the previous core.
        headersTimeout: 0,
        bodyTimeout: 0,
        ...(connect === undefined ? {} : { connect }),
      });
      found = { pool, slots: createTenantSlots(options.limits, sendGranted) };
      pools.set(url.origin, found);
    }
    return found;
  }

  return {
    target(upstream) {
      let found = targets.get(upstream);
      if (found === undefined) {
        const url = new URL(upstream);
        found = {
          ...poolOf(url),
          pathPrefix: url.pathname.replace(/\/+$/, ''),
          query: url.search.slice(1),
        };
        targets.set(upstream, found);
      }
      return found;
    },
    async destroy() {
      const all = [...pools.values()];
      pools.clear();
      targets.clear();
      await Promise.all(all.map(({ pool }) => pool.destroy()));
    },
  };
}

/** The origin-form path undici sends: the upstream's path, then the request's (RFC 9112 §3.2.1). */
export function upstreamPath(target: UpstreamTarget, url: string): string {
  const path = target.pathPrefix === '' ? url : target.pathPrefix + url;
  if (target.query === '') return path;
  return path.includes('?') ? `${path}&${target.query}` : `${path}?${target.query}`;
}

function sendGranted(request: PooledRequest): void {
  request.send();
}
