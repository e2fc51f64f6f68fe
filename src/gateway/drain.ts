/**
 * A graceful stop: readiness fails, the traffic listeners take no new
 * connections, in-flight requests and WebSockets get the drain time to
 * finish, then the cleanup list closes everything (newest first).
 */
import type { Readiness } from '../ops/readiness.js';
import type { Cleanup } from './cleanup.js';
import type { Listeners } from './listeners.js';

export interface Draining {
  readiness: Readiness;
  listeners: Listeners;
  /** Whether a request or a WebSocket is still open. */
  busy: () => boolean;
  cleanup: Cleanup;
}

export async function drainThenClose(parts: Draining, drainMs: number): Promise<void> {
  parts.readiness.drain();
  parts.listeners.stopAccepting();
  const deadline = Date.now() + drainMs;
  while (parts.busy() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await parts.cleanup.run();
}
