/**
 * Session events over Redis pub/sub, on a connection of their own (a
 * subscribed connection can run no other command). Pub/sub delivers at most
 * once: a message sent while the connection is down is lost. So the listener
 * is told exactly when delivery is live — after the SUBSCRIBE is confirmed and
 * while a heartbeat PING keeps answering — and caches built on the events
 * drop everything whenever it was not.
 */
import type { Redis } from 'ioredis';
import type { SessionEvent, SessionEventListener } from './types.js';

/** How often the subscribed connection is probed; a dead one is noticed within about twice this. */
const HEARTBEAT_MS = 1000;

export function watchSessionEvents(
  redis: Redis,
  channel: string,
  listener: SessionEventListener,
): () => void {
  const subscriber = redis.duplicate({ autoResubscribe: false, lazyConnect: true });
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
    const event = parseEvent(message);
    if (event !== undefined) listener.onEvent(event);
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

function parseEvent(message: string): SessionEvent | undefined {
  try {
    const event = JSON.parse(message) as Record<string, unknown>;
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
    if (event.kind === 'token-revoked' && typeof event.jti === 'string') {
      return { kind: 'token-revoked', jti: event.jti };
    }
    if (
      (event.kind === 'membership-removed' || event.kind === 'membership-added') &&
      typeof event.userId === 'string' &&
      typeof event.tenantId === 'string'
    ) {
      return { kind: event.kind, userId: event.userId, tenantId: event.tenantId };
    }
  } catch {
    // Not ours: ignore.
  }
  return undefined;
}
