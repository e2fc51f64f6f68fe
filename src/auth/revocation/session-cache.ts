/**
 * The session guard's in-process cache (`sessions.ts` says when it is exact):
 * per user the session version, per `jti` whether it is revoked, per
 * user×tenant pair the membership and the generation that knowledge is as of,
 * per machine client what liveness needs of it (`client-sessions.ts`).
 * It applies the store's session events, tells watchers of them and of every
 * change of trust, and answers from what it holds only while it is trusted
 * (events live and, in lease mode, the lease fresh).
 */
import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../bounded-cache.js';
import type { MembershipState, SessionEvent, SessionEventListener } from '../../store/types.js';
import type { RevocationLease } from './revocation-lease.js';
import type { AccessTokenClaims } from '../tokens/tokens.js';

/** What a client token's liveness needs of its client; null when there is no such client. */
export type ClientLiveness = { generation: number; expiresAt: number | undefined } | null;

/** A user the store does not know: every token of theirs is dead. */
export const UNKNOWN_USER = -1;

/** What the store says of a token: each part cached on its own. */
export interface SessionState {
  revoked: boolean;
  version: number;
  /** The token's user×tenant pair. */
  membership: MembershipState;
}

/** The membership cache's key: tenant ids are DNS labels, so never hold a `/`. */
const membershipKey = (userId: string, tenantId: string): string => `${tenantId}/${userId}`;

/** What a membership event says of its pair; undefined when it does not say (forget the pair). */
function stateAfter(
  event: Extract<SessionEvent, { kind: 'membership-added' | 'membership-removed' }>,
): MembershipState | undefined {
  const { generation } = event;
  if (generation === undefined) return undefined;
  return {
    membership: event.kind === 'membership-added' ? { generation } : null,
    asOf: generation,
  };
}

export class SessionCache {
  readonly versions: LRUCache<string, number>;
  /** jti → revoked?; entries live until the token could no longer verify anyway. */
  readonly revocations: LRUCache<string, boolean>;
  /**
   * `tenant/user` → the pair's state. Ended memberships are kept too, so a
   * refused token costs no store call per request either.
   */
  readonly memberships: LRUCache<string, MembershipState>;
  /**
   * client id → the client as last read. A `client-changed` event forgets
   * the entry (the next verdict reads the store), so events out of order
   * cannot bring an old state back.
   */
  readonly clients: LRUCache<string, { client: ClientLiveness }>;
  /**
   * The epoch in which a token (its verified claims, the same object on every
   * cache hit) was last judged alive from the cache: while no event has come
   * since, nothing can have changed its verdict, so the proxy path repeats no
   * lookup. Weak: it goes with the verifier's cache entry.
   */
  readonly aliveIn = new WeakMap<AccessTokenClaims, number>();
  readonly watchers = new Set<SessionEventListener>();
  /**
   * Moves on every event, every change of liveness and every revocation made
   * here. A store read started in an older epoch may predate an event, so its
   * answer is not cached; a verdict reached in an older epoch is not reused.
   */
  epoch = 0;
  /** Whether session events are delivered. */
  live = false;
  /** Lease mode: the revocation lease the cache's trust also depends on. */
  lease: RevocationLease | undefined = undefined;
  hits = 0;
  misses = 0;
  private reportedTrust = false;

  constructor(max: number) {
    this.versions = boundedCache<string, number>(max);
    this.revocations = boundedCache<string, boolean>(max, { ttlAutopurge: false });
    this.memberships = boundedCache<string, MembershipState>(max);
    this.clients = boundedCache<string, { client: ClientLiveness }>(max);
  }

  /** Moves each time everything held is forgotten. */
  drops = 0;

  /** Forgets everything held. */
  drop(): void {
    this.drops++;
    this.epoch++;
    this.versions.clear();
    this.revocations.clear();
    this.memberships.clear();
    this.clients.clear();
  }

  /** Whether a cached verdict may be used now. */
  trusted(): boolean {
    return this.live && (this.lease === undefined || this.lease.fresh());
  }

  /** Watchers hear of trust as of liveness: while it is off, verdicts come from the store. */
  reportTrust(): void {
    const now = this.trusted();
    if (now === this.reportedTrust) return;
    this.reportedTrust = now;
    for (const watcher of this.watchers) watcher.onLive(now);
  }

  /** Event delivery started or stopped: what was held may have missed events. */
  setLive(value: boolean): void {
    this.drop();
    this.live = value;
    this.reportTrust();
  }

  /** Applies a session event, then tells the watchers of it. */
  apply(event: SessionEvent): void {
    this.epoch++;
    switch (event.kind) {
      case 'session-ended':
        this.versions.set(
          event.userId,
          Math.max(event.sessionVersion, this.versions.get(event.userId) ?? 0),
        );
        break;
      case 'token-revoked':
        this.revocations.set(event.jti, true);
        break;
      case 'membership-removed':
      case 'membership-added': {
        const key = membershipKey(event.userId, event.tenantId);
        const state = stateAfter(event);
        if (state === undefined) this.memberships.delete(key);
        else this.learnMembership(key, state);
        break;
      }
      case 'client-changed':
        this.clients.delete(event.clientId);
        break;
    }
    for (const watcher of this.watchers) watcher.onEvent(event);
  }

  /** What the cache may say of a token: the parts it cannot say are undefined. */
  cached(claims: AccessTokenClaims): Partial<SessionState> {
    if (!this.trusted()) return {};
    const revoked = this.revocations.get(claims.jti);
    const version = this.versions.get(claims.sub);
    const membership = this.memberships.get(membershipKey(claims.sub, claims.tenant_id));
    // A token newer than the cached version or membership: issued after a
    // change whose event has not arrived here yet. Ask the store, never
    // refuse on a guess.
    return {
      revoked,
      version: version !== undefined && claims.sv > version ? undefined : version,
      membership: membership !== undefined && claims.mg > membership.asOf ? undefined : membership,
    };
  }

  /** Keeps what the store said of a token; `ttl` (ms) bounds its revocation entry. */
  remember(claims: AccessTokenClaims, state: SessionState, ttl: number): void {
    this.revocations.set(claims.jti, state.revoked, { ttl });
    this.versions.set(claims.sub, state.version);
    this.learnMembership(membershipKey(claims.sub, claims.tenant_id), state.membership);
  }

  /** A token revoked here. */
  revoked(jti: string, ttl: number): void {
    this.epoch++;
    this.revocations.set(jti, true, { ttl });
  }

  /** Keeps `state` unless what is held already is as new or newer. */
  private learnMembership(key: string, state: MembershipState): void {
    const held = this.memberships.get(key);
    if (held === undefined || state.asOf > held.asOf) this.memberships.set(key, state);
  }
}
