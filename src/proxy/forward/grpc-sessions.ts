/**
 * HTTP/2 sessions to gRPC upstreams, pooled per origin (and TLS settings):
 * h2c to `http://`, h2 over TLS (ALPN `h2`) to `https://` with the route's
 * `tls` options. A stream goes on the least busy open session; a new session
 * is opened only while every open one is at the upstream's
 * `SETTINGS_MAX_CONCURRENT_STREAMS`, up to {@link MAX_SESSIONS} per origin.
 * A session that is closing (GOAWAY), closed or broken leaves the pool at
 * once — its open streams finish on it — and the next stream opens a new one.
 * An idle session closes after {@link IDLE_MS}.
 */
import { connect, type ClientHttp2Session, type SecureClientSessionOptions } from 'node:http2';
import type { UpstreamTls } from './upstream-pools.js';

/** Sessions per upstream origin: streams multiplex, so a few carry a lot. */
export const MAX_SESSIONS = 4;
/** An unused session is closed after this long. */
const IDLE_MS = 60_000;
/** nghttp2's default while the upstream's SETTINGS have not arrived. */
const DEFAULT_MAX_STREAMS = 100;

interface Pooled {
  session: ClientHttp2Session;
  active: number;
}

export interface GrpcSessions {
  /** A session to `origin` for one more stream; call the returned `done` when that stream closes. */
  take(origin: string, tls: UpstreamTls | undefined): { session: ClientHttp2Session; done(): void };
  /** Open sessions (all origins). */
  size(): number;
  /** Destroys every session (their streams are reset). */
  close(): void;
}

export function createGrpcSessions(): GrpcSessions {
  const pools = new Map<string, Pooled[]>();
  const leave = (key: string, pooled: Pooled) => {
    const list = pools.get(key);
    const at = list?.indexOf(pooled) ?? -1;
    if (list === undefined || at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) pools.delete(key);
  };
  return {
    take(origin, tls) {
      const key = tls === undefined ? origin : `${origin} ${tls.key}`;
      const list = pools.get(key) ?? [];
      pools.set(key, list);
      let pooled = leastBusy(list);
      if (pooled === undefined || (atCapacity(pooled) && list.length < MAX_SESSIONS)) {
        pooled = open(origin, tls, () => leave(key, fresh));
        const fresh = pooled;
        list.push(pooled);
      }
      const taken = pooled;
      taken.active++;
      return { session: taken.session, done: () => void taken.active-- };
    },
    size: () => [...pools.values()].reduce((n, list) => n + list.length, 0),
    close() {
      for (const list of pools.values()) for (const p of list) p.session.destroy();
      pools.clear();
    },
  };
}

function open(origin: string, tls: UpstreamTls | undefined, gone: () => void): Pooled {
  const options: SecureClientSessionOptions =
    tls === undefined ? {} : (tls.connect as SecureClientSessionOptions);
  const session = connect(origin, options);
  const pooled: Pooled = { session, active: 0 };
  // A session's failure reaches its streams (each answers its call); the pool only forgets it.
  session.on('error', gone);
  session.on('goaway', gone);
  session.on('close', gone);
  session.setTimeout(IDLE_MS, () => {
    if (pooled.active === 0) session.close();
  });
  return pooled;
}

function leastBusy(list: readonly Pooled[]): Pooled | undefined {
  let best: Pooled | undefined;
  for (const p of list) {
    if (p.session.closed || p.session.destroyed) continue;
    if (best === undefined || p.active < best.active) best = p;
  }
  return best;
}

function atCapacity(p: Pooled): boolean {
  const max = p.session.remoteSettings?.maxConcurrentStreams ?? DEFAULT_MAX_STREAMS;
  return p.active >= max;
}
