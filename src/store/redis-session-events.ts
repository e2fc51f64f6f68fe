/**
 * Session events over Redis pub/sub, on a connection of their own (a
 * subscribed connection can run no other command). Pub/sub delivers at most
 * once: a message sent while the connection is down is lost. So the listener
 * is told exactly when delivery is live — after the SUBSCRIBE is confirmed and
 * while a heartbeat PING keeps answering — and caches built on the events
 * drop everything whenever it was not.
 */
import type { Redis } from 'ioredis';
import type { RedisTopology } from './redis-topology.js';
import type { SessionEvent, SessionEventListener } from './types.js';

/** How often the subscribed connection is probed; a dead one is noticed within about twice this. */
const HEARTBEAT_MS = 1000;

/**
 * Watches every node that can publish session events (one Redis: itself; a
 * Cluster: each master, followed as the topology changes). Live only while
 * every one of those subscriptions is.
 */
export function watchSessionEvents(
  topology: RedisTopology,
  channel: string,
  listener: SessionEventListener,
): () => void {
  const watches = new Map<Redis, { live: boolean; stop(): void }>();
  let live = false;
  let stopped = false;
  const update = (): void => {
    const heard = new Set(
      [...watches].filter(([, w]) => w.live).map(([node]) => topology.keyOf(node)),
    );
    const now =
      !stopped &&
      watches.size > 0 &&
      [...watches.values()].every((w) => w.live) &&
      topology.slotMasters().every((master) => heard.has(master));
    if (now === live) return;
    live = now;
    listener.onLive(now);
  };
  const sync = (): void => {
    if (stopped) return;
    const publishers = new Set(topology.publishers());
    for (const [node, watch] of watches) {
      if (publishers.has(node)) continue;
      watches.delete(node);
      watch.stop();
    }
    for (const node of publishers) {
      if (watches.has(node)) continue;
      const watch = { live: false, stop: () => {} };
      watches.set(node, watch);
      watch.stop = watchOne(node, channel, {
        onEvent: (event) => listener.onEvent(event),
        onConfirmationRequest: (id) => listener.onConfirmationRequest?.(id),
        onLive: (value) => {
          watch.live = value;
          update();
        },
      });
    }
    update();
  };
  sync();
  const unsubscribe = topology.onChange(sync);
  // A promotion can show in the slot table before any event says so.
  const resync = setInterval(sync, HEARTBEAT_MS);
  resync.unref();
  return () => {
    stopped = true;
    clearInterval(resync);
    unsubscribe();
    for (const watch of watches.values()) watch.stop();
    watches.clear();
    update();
  };
}

function watchOne(redis: Redis, channel: string, listener: SessionEventListener): () => void {
  const subscriber = redis.duplicate({
    autoResubscribe: false,
    lazyConnect: true,
    // A cluster's node connections do not reconnect by themselves; this one must.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  });
  let live = false;
  let stopped = false;
  const setLive = (value: boolean): void => {
    if (value === live || (value && stopped)) return;
    live = value;
    listener.onLive(value);
  };

  subscriber.on('error', () => setLive(false));
  subscriber.on('close', () => setLive(false));
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => setLive(true),
      () => subscriber.disconnect(true),
    );
  });
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    deliver(message, listener);
  });
  subscriber.connect().catch(() => undefined);

  // A connection can die without a FIN (a partition): only an unanswered PING shows it.
  const heartbeat = setInterval(() => {
    if (!live) return;
    subscriber.ping().catch(() => {
      setLive(false);
      subscriber.disconnect(true);
    });
  }, HEARTBEAT_MS);
  heartbeat.unref();

  return () => {
    stopped = true;
    clearInterval(heartbeat);
    setLive(false);
    subscriber.disconnect();
  };
}

/**
 * A session event, or a confirmation request (lease mode: `{kind: "confirm",
 * id, events}`, its events delivered first). Anything else is not ours.
 */
function deliver(message: string, listener: SessionEventListener): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return;
  }
  const request = parsed as { kind?: unknown; id?: unknown; events?: unknown };
  if (request.kind === 'confirm') {
    if (typeof request.id !== 'string' || !Array.isArray(request.events)) return;
    const events = request.events.map(parseEvent);
    // A request with a part we cannot read is never acknowledged: its revoker then fences us.
    if (events.some((event) => event === undefined)) return;
    for (const event of events as SessionEvent[]) listener.onEvent(event);
    listener.onConfirmationRequest?.(request.id);
    return;
  }
  const event = parseEvent(parsed);
  if (event !== undefined) listener.onEvent(event);
}

function parseEvent(parsed: unknown): SessionEvent | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const event = parsed as Record<string, unknown>;
  if (
    event.kind === 'session-ended' &&
    typeof event.userId === 'string' &&
    Number.isSafeInteger(event.sessionVersion)
  ) {
    return {
      kind: 'session-ended',
      userId: event.userId,
      sessionVersion: event.sessionVersion as number,
    };
  }
  if (event.kind === 'client-changed' && typeof event.clientId === 'string') {
    return { kind: 'client-changed', clientId: event.clientId };
  }
  if (event.kind === 'token-revoked' && typeof event.jti === 'string') {
    return { kind: 'token-revoked', jti: event.jti };
  }
  if (
    (event.kind === 'membership-removed' || event.kind === 'membership-added') &&
    typeof event.userId === 'string' &&
    typeof event.tenantId === 'string'
  ) {
    const { kind, userId, tenantId, generation } = event;
    // Without a usable generation (a lease confirmation, an earlier version) the listener forgets the pair.
    return Number.isSafeInteger(generation) && (generation as number) > 0
      ? { kind, userId, tenantId, generation: generation as number }
      : { kind, userId, tenantId };
  }
  return undefined;
}
