/**
 * API keys on the request path (`apiKeys.enabled`): a machine client's key →
 * the client as principal, with the scopes the client holds now
 * (`client-scope-bounds.ts`: its stored scopes as far as the live config
 * allows), for the key's tenant. Those are worked out when the principal is
 * made and again for every key kept here at a reload ({@link ApiKeys.rebound}),
 * never per request.
 *
 * Steady state: no store call. A key verified once (its SHA-256 matched the
 * stored digest, its client exists and neither has expired) is kept by the
 * exact key it was presented as, so the next request is one map lookup and a
 * few comparisons, never a hash. What is kept is forgotten:
 *
 * - for every key of a client, on the store's `client-changed` event — a key
 *   removed, the secret rotated, the client or its tenant removed — which the
 *   session guard applies first and, in lease mode, acknowledges to the
 *   revoker only after (`confirmed-revocations.ts`): the revoker's answer
 *   comes after every instance has forgotten the key;
 * - for every key, whenever the session guard stops trusting what it learnt
 *   from the store (events not delivered, the lease not fresh,
 *   {@link SessionGuard.trust}): then every request reads the store, and with
 *   the store down that is a 503, never a guess;
 * - at the key's or its client's expiry.
 *
 * A key that was accepted here and is presented again after its removal is
 * refused as `key_ended` and reported (`onEnded`: an audit event), at most
 * once a minute per key; any other unknown key is `unknown_key`. A wrong key
 * costs one store read and a digest whichever of its parts is wrong: an
 * unknown id is compared against a digest of nothing, so no timing tells a
 * right id from a wrong one. A key whose checksum fails is refused without a
 * lookup (`malformed_key`).
 *
 * The last use of each key is written in the background, at most once a
 * minute per key and instance (`touchApiKey`), never on the request path.
 */
import { LRUCache } from 'lru-cache';
import type { ApiKeyRecord, ClientRecord, Store } from '../../store/types.js';
import type { ApiKeyPrincipal } from '../credentials/authenticate.js';
import { liveClientScopes, type ClientScopeBounds } from './client-scope-bounds.js';
import { apiKeyId, secretMatches } from './secrets.js';
import type { SessionGuard } from '../revocation/sessions.js';
import { tokenRefused } from '../tokens/token-refusals.js';

/** A credential presented after it ended, for the audit log. */
export interface EndedCredential {
  clientId: string;
  tenantId: string;
  keyId?: string;
  jti?: string;
}

export interface ApiKeys {
  /**
   * The key's principal: synchronous when the key is known here (the steady
   * state), else a promise.
   * @throws GatewayError `invalid_token` (or rejects with it); `unavailable` with the store down
   */
  authenticate(apiKey: string): ApiKeyPrincipal | Promise<ApiKeyPrincipal>;
  /**
   * For what holds a verdict longer than a request (an open WebSocket): true
   * when the key is still known alive here, false when the store must be asked.
   * @throws GatewayError `invalid_token` when the key is known to have ended
   */
  aliveFromCache(principal: ApiKeyPrincipal): boolean;
  /** Asks the store whether the principal's key and client still stand. */
  assertAlive(principal: ApiKeyPrincipal): Promise<void>;
  /**
   * Works out again the scopes of every key kept here, from the bounds as
   * they are now: called by a reload once it has replaced them.
   */
  rebound(): void;
  /** Writes the pending last-use times and stops. */
  close(): Promise<void>;
}

export interface ApiKeyOptions {
  /** The slices it reads (and where it records a key's last use). */
  store: Pick<Store, 'apiKeys' | 'clients'>;
  sessions: SessionGuard;
  /** The live config bounding a client's scopes. */
  bounds: ClientScopeBounds;
  /** A key accepted here, presented after it ended. */
  onEnded?: (credential: EndedCredential) => void;
  /** Keys kept (default 10,000). */
  entries?: number;
  /** ms between writes of last-use times (default 10 s). */
  flushMs?: number;
  /** ms. */
  now?: () => number;
}

/** A key's last use is written at most this often per instance (ms). */
const TOUCH_EVERY_MS = 60_000;
/** A key presented after it ended is reported at most this often (ms). */
const REPORT_EVERY_MS = 60_000;
/** Compared against when there is no key, so an unknown id costs a digest too. */
const NO_DIGEST = '0'.repeat(64);

/** What every key of one client shares: set when the client changes. */
interface ClientMark {
  changed: boolean;
}

interface Entry {
  principal: ApiKeyPrincipal;
  /** What the principal's scopes are worked out from (`rebound`). */
  client: Pick<ClientRecord, 'scopes' | 'createdBy'>;
  mark: ClientMark;
  /** The guard's trust number it was learnt under. */
  trust: number;
  /** ms; Infinity: never. */
  expiresAtMs: number;
  nextTouchMs: number;
  /** Known ended (a store read said so): refused without another; a use after a removal is reported. */
  ended: false | 'removed' | 'expired';
  reportedAtMs: number;
}

export function createApiKeys(options: ApiKeyOptions): ApiKeys {
  return new KeyCache(options);
}

class KeyCache implements ApiKeys {
  /** The exact key presented → what it proved. Only keys that matched their digest. */
  readonly #byKey: LRUCache<string, Entry>;
  /** key id → the same entry, for WebSocket rechecks (which hold no key). */
  readonly #byKeyId = new Map<string, Entry>();
  readonly #marks = new Map<string, ClientMark>();
  /** Moves on every `client-changed`: a read started before one is not kept. */
  #changes = 0;
  readonly #touches = new Map<string, number>();
  readonly #flush: NodeJS.Timeout;
  readonly #unwatch: () => void;
  readonly #now: () => number;

  constructor(private readonly options: ApiKeyOptions) {
    this.#now = options.now ?? Date.now;
    this.#byKey = new LRUCache<string, Entry>({
      max: options.entries ?? 10_000,
      dispose: (entry) => {
        if (this.#byKeyId.get(entry.principal.keyId) === entry)
          this.#byKeyId.delete(entry.principal.keyId);
      },
    });
    this.#unwatch = options.sessions.watch({
      onEvent: (event) => {
        if (event.kind !== 'client-changed') return;
        this.#changes++;
        const mark = this.#marks.get(event.clientId);
        if (mark !== undefined) {
          mark.changed = true;
          this.#marks.delete(event.clientId);
        }
      },
      onLive: () => {},
    });
    this.#flush = setInterval(() => void this.#writeTouches(), options.flushMs ?? 10_000);
    this.#flush.unref();
  }

  authenticate(apiKey: string): ApiKeyPrincipal | Promise<ApiKeyPrincipal> {
    const entry = this.#byKey.get(apiKey);
    if (entry !== undefined) {
      if (entry.ended !== false) throw this.#ended(entry);
      const now = this.#now();
      if (this.#fresh(entry, now)) {
        if (now >= entry.nextTouchMs) this.#touch(entry, now);
        return entry.principal;
      }
    }
    const keyId = apiKeyId(apiKey);
    if (keyId === null) throw tokenRefused('malformed_key', 'The API key is malformed.');
    return this.#read(apiKey, keyId, entry);
  }

  aliveFromCache(principal: ApiKeyPrincipal): boolean {
    const entry = this.#byKeyId.get(principal.keyId);
    if (entry === undefined) return false;
    if (entry.ended !== false) throw keyEnded();
    return this.#fresh(entry, this.#now());
  }

  async assertAlive(principal: ApiKeyPrincipal): Promise<void> {
    const { store } = this.options;
    const key = await store.apiKeys.getApiKey(principal.keyId);
    const client = key === null ? null : await store.clients.getClient(key.clientId);
    if (key === null || client === null || !standing(key, client, this.#now())) throw keyEnded();
  }

  rebound(): void {
    for (const entry of this.#byKey.values()) {
      entry.principal = Object.freeze({
        ...entry.principal,
        scopes: Object.freeze(liveClientScopes(entry.client, this.options.bounds)),
      });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#flush);
    this.#unwatch();
    await this.#writeTouches();
  }

  #fresh(entry: Entry, now: number): boolean {
    return (
      !entry.mark.changed &&
      entry.trust === this.options.sessions.trust() &&
      now < entry.expiresAtMs
    );
  }

  async #read(apiKey: string, keyId: string, known: Entry | undefined): Promise<ApiKeyPrincipal> {
    const { store, sessions } = this.options;
    const trust = sessions.trust();
    const changes = this.#changes;
    const key = await store.apiKeys.getApiKey(keyId);
    const matches = secretMatches(apiKey, key?.digest ?? NO_DIGEST);
    const client = key === null || !matches ? null : await store.clients.getClient(key.clientId);
    const now = this.#now();
    if (key === null || !matches || client === null || !standing(key, client, now)) {
      if (known === undefined) {
        if (key === null || !matches)
          throw tokenRefused('unknown_key', 'The API key is not known.');
        throw keyEnded();
      }
      // Accepted here before: removed since (an audit event), or expired.
      known.ended = key === null || client === null ? 'removed' : 'expired';
      throw this.#ended(known);
    }
    const entry = this.#entry(key, client, now, trust);
    if (trust !== -1 && trust === sessions.trust() && changes === this.#changes) {
      this.#byKey.set(apiKey, entry);
      this.#byKeyId.set(keyId, entry);
    }
    this.#touch(entry, now);
    return entry.principal;
  }

  #entry(key: ApiKeyRecord, client: ClientRecord, now: number, trust: number): Entry {
    let mark = this.#marks.get(client.clientId);
    if (mark === undefined) {
      mark = { changed: false };
      this.#marks.set(client.clientId, mark);
    }
    const expiresAt = earliest(key.expiresAt, client.expiresAt);
    const principal: ApiKeyPrincipal = Object.freeze({
      kind: 'api_key',
      userId: client.clientId,
      email: '',
      clientId: client.clientId,
      keyId: key.keyId,
      tenantId: key.tenantId,
      // A machine client belongs to an org tenant (`client add` refuses any other).
      tenantType: 'orgtenant',
      scopes: Object.freeze(liveClientScopes(client, this.options.bounds)),
      expiresAt,
    });
    return {
      principal,
      client: {
        scopes: client.scopes,
        ...(client.createdBy === undefined ? {} : { createdBy: client.createdBy }),
      },
      mark,
      trust,
      expiresAtMs: expiresAt === undefined ? Infinity : expiresAt * 1000,
      nextTouchMs: now,
      ended: false,
      reportedAtMs: -Infinity,
    };
  }

  /** The refusal of a key known ended; a use after its removal reported at most once a minute. */
  #ended(entry: Entry) {
    const now = this.#now();
    if (entry.ended === 'removed' && now - entry.reportedAtMs >= REPORT_EVERY_MS) {
      entry.reportedAtMs = now;
      const { clientId, tenantId, keyId } = entry.principal;
      this.options.onEnded?.({ clientId, tenantId, keyId });
    }
    return keyEnded();
  }

  #touch(entry: Entry, now: number): void {
    entry.nextTouchMs = now + TOUCH_EVERY_MS;
    this.#touches.set(entry.principal.keyId, Math.floor(now / 1000));
  }

  async #writeTouches(): Promise<void> {
    const touches = [...this.#touches];
    this.#touches.clear();
    // Best effort: a lost write leaves an older last-use time, never a refusal.
    await Promise.all(
      touches.map(([keyId, at]) =>
        this.options.store.apiKeys.touchApiKey(keyId, at).catch(() => {}),
      ),
    );
  }
}

/** Whether a key and its client stand at `nowMs`: the same tenant, neither expired. */
function standing(key: ApiKeyRecord, client: ClientRecord, nowMs: number): boolean {
  const expiresAt = earliest(key.expiresAt, client.expiresAt);
  return client.tenantId === key.tenantId && (expiresAt === undefined || expiresAt * 1000 > nowMs);
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

const keyEnded = () =>
  tokenRefused('key_ended', 'The API key was removed or has expired, or its client was.');
