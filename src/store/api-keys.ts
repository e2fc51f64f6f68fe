/**
 * The API keys slice of the store (`Store.apiKeys`): keys of machine
 * clients. Implemented by `memory-api-keys.ts` and `redis-api-keys.ts`.
 */

/** An API key of a machine client; the key itself is kept only as a digest. */
export interface ApiKeyRecord {
  /** `tgkid_…`, unique in the store; the key names it. */
  keyId: string;
  clientId: string;
  /** The client's tenant, copied at creation (a client never changes tenant). */
  tenantId: string;
  /** SHA-256 of the key, hex. */
  digest: string;
  /** From the store's generation counter, taken at creation. */
  generation: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; absent: never expires. */
  expiresAt?: number;
  /** Unix seconds of the last use seen (written in the background, so approximate). */
  lastUsedAt?: number;
}

/** What `createApiKey` is given; the store adds the tenant and the generation. */
export type NewApiKey = Omit<ApiKeyRecord, 'tenantId' | 'generation' | 'lastUsedAt'>;

export interface ApiKeyStore {
  /**
   * Adds an API key to a client, at a new generation.
   * @returns null when there is no client `key.clientId`.
   * @throws GatewayError `internal_error` when the key id is in use.
   */
  createApiKey(key: NewApiKey): Promise<ApiKeyRecord | null>;
  getApiKey(keyId: string): Promise<ApiKeyRecord | null>;
  /** The client's keys, sorted by keyId. */
  listApiKeys(clientId: string): Promise<ApiKeyRecord[]>;
  /**
   * Removes one key of a client, taking a new generation, and publishes
   * `client-changed` for the client (every instance forgets its keys).
   * @returns whether the client had the key.
   */
  removeApiKey(clientId: string, keyId: string): Promise<boolean>;
  /**
   * Records a use of the key at `at` (Unix seconds), unless a later one is
   * recorded; nothing for a key that does not exist. Meant for the
   * background: no session event, no replica wait.
   */
  touchApiKey(keyId: string, at: number): Promise<void>;
}
