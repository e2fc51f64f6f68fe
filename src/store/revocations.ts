/**
 * The revocations slice of the store (`Store.revocations`): the deny list
 * of token ids, the session events every instance hears, and (on a store
 * shared between processes) the revocation leases. Implemented by
 * `memory-revocations.ts` and `redis-revocations.ts`.
 */

/**
 * What other instances must hear about at once: a password change ended a
 * user's sessions, a token was revoked, or a membership ended or began (a
 * token is good only for the membership it was issued under). Published
 * atomically with the write that causes it, and only when that write changed
 * something.
 *
 * A membership event's `generation` is the pair's generation after the
 * change: the new membership's, or the one its end took. It is absent when
 * the sender does not know it (a lease confirmation, or an instance of an
 * earlier version): a listener then forgets what it knew of the pair.
 */
export type SessionEvent =
  | { kind: 'session-ended'; userId: string; sessionVersion: number }
  | { kind: 'token-revoked'; jti: string }
  | { kind: 'membership-removed'; userId: string; tenantId: string; generation?: number }
  | { kind: 'membership-added'; userId: string; tenantId: string; generation?: number }
  /**
   * A machine client rotated or removed (with its tenant or alone), or one of
   * its API keys removed: forget what is known of it and its keys.
   */
  | { kind: 'client-changed'; clientId: string };

export interface SessionEventListener {
  /**
   * An event, from this instance or any other sharing the store. A store tells
   * its own watchers of its own writes before the write resolves; the same
   * event may then arrive again (applying one is idempotent).
   */
  onEvent(event: SessionEvent): void;
  /**
   * Whether events are being delivered. While false, events may be lost: a
   * cache built on them must not be trusted (and must be dropped when it turns
   * true again).
   */
  onLive(live: boolean): void;
  /**
   * A confirmation request (lease mode): its events have just been given to
   * `onEvent`; a lease holder acknowledges `confirmationId` once it has
   * applied them.
   */
  onConfirmationRequest?(confirmationId: string): void;
}

/**
 * Revocation leases (`revocation.mode: lease`): what makes a revocation
 * strict across hosts. Each serving instance holds a short lease and trusts
 * its session cache only while the lease is fresh; a revocation asks every
 * holder to confirm it has applied the change, and the ones that do not lose
 * their lease. Lease ends are kept on the store's clock. Only a store shared
 * between processes has them.
 */
export interface RevocationLeases {
  /**
   * Takes or renews `holderId`'s lease for `ms`.
   * @returns true when an unexpired lease was renewed; false when a new one was
   * taken (the old one had ended or was fenced: the holder missed something).
   */
  hold(holderId: string, ms: number): Promise<boolean>;
  release(holderId: string): Promise<void>;
  /** Publishes `events` as one confirmation request to every instance. */
  requestConfirmation(confirmationId: string, events: readonly SessionEvent[]): Promise<void>;
  acknowledge(confirmationId: string, holderId: string): Promise<void>;
  /** How many holders of a live lease have not acknowledged `confirmationId`. */
  unacknowledged(confirmationId: string): Promise<number>;
  /**
   * Ends the lease of every live holder that has not acknowledged.
   * @returns the longest time (ms) one of those leases had left; 0 for none.
   */
  fenceUnacknowledged(confirmationId: string): Promise<number>;
}

export interface RevocationStore {
  /** Deny-lists a token id until `expiresAt` (Unix seconds); the entry then disappears. */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;

  /**
   * Delivers session events to `listener` until the returned function is
   * called. `onLive(true)` is called once delivery has begun.
   */
  watchSessions(listener: SessionEventListener): () => void;

  /** Present when several processes share the store (Redis); see {@link RevocationLeases}. */
  readonly leases?: RevocationLeases;
}
