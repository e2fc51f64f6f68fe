/**
 * One undici `Pool` per upstream origin: keep-alive connections, one request
 * at a time on each (pipelining 1), reused only after an exchange that ended
 * cleanly — undici closes a connection on anything unexpected (a response
 * nobody asked for, bytes arriving while it idles, a framing error, an
 * aborted request), so no answer meant for one request can reach another.
 *
 * In front of each pool, its {@link TenantSlots}: the pool's
 * `connections` is `maxConnections`, and a request is dispatched only once it
 * holds one of as many slots, so undici never queues a request of its own
 * while a tenant is held to its share.
 */
import { Pool } from 'undici';
import { closingUnusedConnections } from './unused-connections.js';
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
}

/**
 * A route's TLS to its https upstream (`routes[].tls`), files already read.
 * Routes with the same origin and the same settings share a pool; other
 * settings get a pool of their own.
 */
export interface UpstreamTls {
  /** Identifies the settings (the config's paths and flags): pools are keyed by it. */
  key: string;
  connect: buildConnector.BuildOptions;
}

export interface UpstreamPools {
  /** The target of an upstream URL (and TLS settings); made once per distinct pair. */
  target(upstream: string, tls?: UpstreamTls): UpstreamTarget;
  /**
   * Keeps the pools of these upstream URLs; every other origin's pool closes
   * once its requests in flight have ended (a config reload that removed
   * routes: their idle keep-alive connections would otherwise stay open).
   */
  retain(upstreams: Iterable<{ upstream: string; tls?: UpstreamTls | undefined }>): void;
  /** Destroys every pool: requests in flight fail, idle connections close. */
  destroy(): Promise<void>;
}

export function createUpstreamPools(options: UpstreamPoolOptions): UpstreamPools {
  type Pooled = { pool: Pool; slots: TenantSlots<PooledRequest> };
  /** By origin and TLS settings. */
  const pools = new Map<string, Pooled>();
  const targets = new Map<string, UpstreamTarget>();

  function poolOf(url: URL, tls: UpstreamTls | undefined): Pooled {
    const id = poolId(url.origin, tls);
    let found = pools.get(id);
    if (found === undefined) {
      const pool = new Pool(url.origin, {
        connections: options.limits.maxConnections,
        pipelining: 1,
        // The route's timeout covers the wait for the response head; a
        // response body may be slow (a stream, a long poll) for as long as
        // the client reads it.
        headersTimeout: 0,
        bodyTimeout: 0,
        // The pool builds its connector from these; its clients wrap it.
        connect: tls?.connect,
        factory: closingUnusedConnections(),
      });
      found = { pool, slots: createTenantSlots(options.limits, sendGranted) };
      pools.set(id, found);
    }
    return found;
  }

  return {
    target(upstream, tls) {
      const id = poolId(upstream, tls);
      let found = targets.get(id);
      if (found === undefined) {
        const url = new URL(upstream);
        found = {
          ...poolOf(url, tls),
          pathPrefix: url.pathname.replace(/\/+$/, ''),
          query: url.search.slice(1),
        };
        targets.set(id, found);
      }
      return found;
    },
    retain(upstreams) {
      const kept = new Set<string>();
      for (const { upstream, tls } of upstreams) {
        kept.add(poolId(upstream, tls));
        kept.add(poolId(new URL(upstream).origin, tls));
      }
      for (const id of targets.keys()) if (!kept.has(id)) targets.delete(id);
      for (const [id, { pool, slots }] of pools) {
        if (kept.has(id)) continue;
        pools.delete(id);
        // In flight: their exchanges hold the pool and finish on it.
        void slots.drained().then(() => pool.close().catch(() => {}));
      }
    },
    async destroy() {
      const all = [...pools.values()];
      pools.clear();
      targets.clear();
      await Promise.all(all.map(({ pool }) => pool.destroy()));
    },
  };
}

function poolId(where: string, tls: UpstreamTls | undefined): string {
  return tls === undefined ? where : `${where} ${tls.key}`;
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
