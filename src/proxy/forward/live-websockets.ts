/**
 * Open proxied WebSockets and the tokens that opened them. A WebSocket is
 * authenticated once, at its upgrade; this keeps that verdict true for as
 * long as it stays open. Each one is judged
 * again by the session guard — the same verdict a request would get — when a
 * session event could have changed it, and closed with 1008 (policy
 * violation, RFC 6455 §7.4.1) once its token is revoked, its user's password
 * changes, the membership it was issued under ends, or the token expires —
 * or, opened with an API key, once the key or its client is removed or
 * expires (`auth/clients/api-keys.ts` judges it again).
 *
 * Outage policy (fail closed, without closing on every blip): while event
 * delivery is down the guard can no longer hear of a change, so every open
 * WebSocket is re-checked against the store every {@link RECHECK_MS}, and
 * once more when delivery returns. A dead token is closed with 1008; with
 * the store unreachable too, nothing can be proven and the WebSocket is
 * closed with 1013 (try again later), as an HTTP request would get a 503.
 */
import type { Duplex } from 'node:stream';
import * as ws from 'ws';
import type { ApiKeys } from '../../auth/clients/api-keys.js';
import type { Principal } from '../../auth/credentials/authenticate.js';
import type { SessionGuard } from '../../auth/revocation/sessions.js';
import { isGatewayError } from '../../errors.js';
import type { SessionEvent } from '../../store/types.js';
import { GRPC_STATUS } from '../../http/grpc-refusal.js';
import type { EndCall } from './forward-grpc.js';

export interface LiveWebSockets {
  /**
   * Watches a WebSocket the upstream has just accepted, until either side
   * closes it. Call before the gateway writes its 101: the first check waits
   * for the next turn of the event loop.
   */
  track(client: Duplex, upstream: Duplex, principal: Principal): void;
  /**
   * Watches a live gRPC call the same way: a verdict that would close a
   * WebSocket with 1008 ends the call with `grpc-status` 16
   * UNAUTHENTICATED (`grpc-message` `invalid_token`), one that would close
   * it with 1013 ends it with 14 UNAVAILABLE. Returns the undo, for when
   * the call ends on its own.
   */
  trackCall(end: EndCall, principal: Principal): () => void;
  /** WebSockets (and gRPC calls) being watched. */
  size(): number;
  /** Stops watching (the sockets themselves are the forwarder's to close). */
  close(): void;
}

/** RFC 6455 §7.4.1: the endpoint received a message that violates its policy. */
const POLICY_VIOLATION = 1008;
/** IANA WebSocket close code registry: a temporary condition, try again later. */
const TRY_AGAIN_LATER = 1013;
/** While event delivery is down, how often every open WebSocket is re-checked against the store. */
const RECHECK_MS = 5000;
/** How long a client gets to answer our close frame before its socket is destroyed. */
const CLOSING_HANDSHAKE_MS = 1000;
/** setTimeout's longest delay; a later expiry is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ws` frames WebSocket messages for us; its Sender is exported but absent from @types/ws. */
const { Sender } = ws as unknown as {
  Sender: {
    frame(
      data: Buffer,
      options: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean },
    ): Buffer[];
  };
};

/** An unmasked close frame, as a server sends it (RFC 6455 §5.5.1). */
function closeFrame(code: number, reason: string): Buffer {
  // A control frame's payload is at most 125 bytes: the code and 123 of reason.
  const text = Buffer.byteLength(reason) <= 123 ? reason : '';
  const payload = Buffer.alloc(2 + Buffer.byteLength(text));
  payload.writeUInt16BE(code, 0);
  payload.write(text, 2);
  return Buffer.concat(
    Sender.frame(payload, { fin: true, opcode: 0x08, mask: false, readOnly: false, rsv1: false }),
  );
}

/** One open WebSocket being watched. */
interface Watched {
  owner: WebSocketWatch;
  client: Duplex | undefined;
  upstream: Duplex | undefined;
  /** A gRPC call's end, instead of a WebSocket's sockets. */
  call?: EndCall;
  principal: Principal;
  expiry: NodeJS.Timeout | undefined;
  closing: boolean;
}

export function createLiveWebSockets(deps: {
  sessions: SessionGuard;
  clockSkewSeconds: number;
  /** Where API keys are on: they judge a WebSocket opened with a key. */
  apiKeys?: ApiKeys | undefined;
}): LiveWebSockets {
  return new WebSocketWatch(deps.sessions, deps.clockSkewSeconds, deps.apiKeys);
}

class WebSocketWatch implements LiveWebSockets {
  readonly all = new Set<Watched>();
  readonly byUser = new Map<string, Set<Watched>>();
  readonly byJti = new Map<string, Set<Watched>>();
  #rechecks: NodeJS.Timeout | undefined;
  readonly #unwatch: () => void;

  constructor(
    readonly sessions: SessionGuard,
    readonly clockSkewSeconds: number,
    readonly apiKeys: ApiKeys | undefined,
  ) {
    this.#unwatch = sessions.watch({
      onEvent: (event) => this.#onEvent(event),
      onLive: (live) => this.#onLive(live),
    });
  }

  track(client: Duplex, upstream: Duplex, principal: Principal): void {
    const w = this.#watch({ client, upstream, principal });
    client.once('close', () => this.forget(w));
  }

  trackCall(call: EndCall, principal: Principal): () => void {
    const w = this.#watch({ client: undefined, upstream: undefined, call, principal });
    return () => this.forget(w);
  }

  #watch(what: Pick<Watched, 'client' | 'upstream' | 'call' | 'principal'>): Watched {
    const { principal } = what;
    const w: Watched = { owner: this, ...what, expiry: undefined, closing: false };
    this.all.add(w);
    // A client's id for its tokens and keys: `client-changed` names it.
    index(this.byUser, principal.userId, w);
    if (principal.kind !== 'api_key') index(this.byJti, principal.claims.jti, w);
    armExpiry(w);
    // An event may have come between the upgrade's admission and now.
    setImmediate(check, w);
    return w;
  }

  size(): number {
    return this.all.size;
  }

  close(): void {
    this.#unwatch();
    clearInterval(this.#rechecks);
    for (const w of [...this.all]) this.forget(w);
  }

  forget(w: Watched): void {
    if (!this.all.delete(w)) return;
    unindex(this.byUser, w.principal.userId, w);
    if (w.principal.kind !== 'api_key') unindex(this.byJti, w.principal.claims.jti, w);
    clearTimeout(w.expiry);
  }

  readonly checkAll = (): void => {
    for (const w of [...this.all]) check(w);
  };

  #onEvent(event: SessionEvent): void {
    const affected = this.#affectedBy(event);
    if (affected !== undefined) for (const w of [...affected]) check(w);
  }

  #onLive(live: boolean): void {
    clearInterval(this.#rechecks);
    this.#rechecks = undefined;
    if (live) {
      // Whatever happened while delivery was down is in the store: look.
      this.checkAll();
      return;
    }
    this.#rechecks = setInterval(this.checkAll, RECHECK_MS);
    this.#rechecks.unref();
  }

  #affectedBy(event: SessionEvent): Set<Watched> | undefined {
    switch (event.kind) {
      case 'token-revoked':
        return this.byJti.get(event.jti);
      case 'session-ended':
      case 'membership-removed':
      // A new membership ends the tokens of any earlier one of the pair.
      case 'membership-added':
        return this.byUser.get(event.userId);
      // A client's tokens and keys are indexed by its client id.
      case 'client-changed':
        return this.byUser.get(event.clientId);
    }
  }
}

function index(map: Map<string, Set<Watched>>, key: string, w: Watched): void {
  const set = map.get(key) ?? new Set<Watched>();
  set.add(w);
  map.set(key, set);
}

function unindex(map: Map<string, Set<Watched>>, key: string, w: Watched): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(w);
  if (set.size === 0) map.delete(key);
}

/**
 * Ends the WebSocket: our close frame to the client, then the upstream's
 * connection cut. The upstream's frames stop being relayed first. Frames
 * are not parsed here (the proxy relays bytes), so a frame the upstream was
 * in the middle of sending when the verdict came is cut short, and that
 * client sees a protocol error instead of our 1008: the WebSocket ends
 * either way.
 */
function close(w: Watched, code: number, reason: string): void {
  if (w.closing) return;
  w.closing = true;
  w.owner.forget(w);
  const { client, upstream, call } = w;
  if (call !== undefined) {
    const revoked = code === POLICY_VIOLATION;
    call(
      revoked ? GRPC_STATUS.UNAUTHENTICATED : GRPC_STATUS.UNAVAILABLE,
      revoked ? 'invalid_token' : 'unavailable',
    );
    return;
  }
  if (client === undefined || upstream === undefined) return;
  upstream.unpipe(client);
  client.unpipe(upstream);
  if (!client.destroyed) {
    client.resume(); // the client's answer (its own close frame) is read and dropped
    client.end(closeFrame(code, reason));
    setTimeout(() => client.destroy(), CLOSING_HANDSHAKE_MS).unref();
  }
  upstream.destroy();
}

function refuse(w: Watched, err: unknown): void {
  if (isGatewayError(err) && err.code === 'invalid_token') {
    close(w, POLICY_VIOLATION, err.message);
  } else {
    close(w, TRY_AGAIN_LATER, 'The session state cannot be checked.');
  }
}

/** Judges the credential again: from the cache when it can tell, else from the store. */
function check(w: Watched): void {
  if (w.closing || !w.owner.all.has(w)) return;
  const { sessions, apiKeys } = w.owner;
  const { principal } = w;
  let alive: Promise<void>;
  try {
    if (principal.kind !== 'api_key') {
      if (sessions.aliveFromCache(principal.claims)) return;
      alive = sessions.assertAlive(principal.claims);
    } else {
      // Keys off since (never: `apiKeys` takes a restart): nothing can vouch for it.
      if (apiKeys === undefined) throw new Error('API keys are off');
      if (apiKeys.aliveFromCache(principal)) return;
      alive = apiKeys.assertAlive(principal);
    }
  } catch (err) {
    refuse(w, err);
    return;
  }
  alive.then(undefined, (err: unknown) => refuse(w, err));
}

/** When the credential stops verifying (ms): a token at exp + skew, a key at its expiry. */
function expiresAtMs(w: Watched): number {
  const { principal } = w;
  if (principal.kind !== 'api_key') return (principal.claims.exp + w.owner.clockSkewSeconds) * 1000;
  return principal.expiresAt === undefined ? Infinity : principal.expiresAt * 1000;
}

function armExpiry(w: Watched): void {
  const at = expiresAtMs(w);
  if (at === Infinity) return;
  const delay = at - Date.now();
  if (delay > MAX_TIMER_MS) {
    w.expiry = setTimeout(armExpiry, MAX_TIMER_MS, w);
  } else {
    // The verifier accepts a token until exp + skew: so does an open WebSocket.
    const why =
      w.principal.kind === 'api_key' ? 'The API key has expired.' : 'The token has expired.';
    w.expiry = setTimeout(close, Math.max(0, delay), w, POLICY_VIOLATION, why);
  }
  w.expiry.unref();
}
