/**
 * The machine clients slice of the store (`Store.clients`). Implemented by
 * `memory-clients.ts` and `redis-clients.ts`; their API keys are a slice of
 * their own (`api-keys.ts`).
 */

/** A tenant's machine client (service account); its secret is kept only as a digest. */
export interface ClientRecord {
  /** `tgc_…`, unique in the store. */
  clientId: string;
  tenantId: string;
  name: string;
  /** Sorted, without duplicates. */
  scopes: string[];
  /** SHA-256 of the secret, hex (`auth/clients/secrets.ts`). */
  secretDigest: string;
  /**
   * From the store's generation counter (see `Membership.generation`): taken
   * anew at creation and at every rotation, so a token issued before a change
   * never matches the client again.
   */
  generation: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; absent: never expires. */
  expiresAt?: number;
  /** Unix seconds of the last rotation. */
  rotatedAt?: number;
  /**
   * Who made it: a tenant admin (the identity API) or the operator (the
   * CLI). A client an admin made holds at most the admin role's scopes now
   * (`auth/clients/client-scope-bounds.ts`); absent (made before this was recorded):
   * bounded as an admin's.
   */
  createdBy?: ClientMaker;
}

/** Who made a machine client. */
export type ClientMaker = 'admin' | 'operator';

/** What `createClient` is given; the store adds the generation. */
export type NewClient = Omit<ClientRecord, 'generation' | 'rotatedAt'>;

export interface ClientStore {
  /**
   * Creates a machine client of an org tenant, at a new generation.
   * @returns null when there is no org tenant `client.tenantId`.
   * @throws GatewayError `internal_error` when the client id is in use.
   */
  createClient(client: NewClient): Promise<ClientRecord | null>;
  getClient(clientId: string): Promise<ClientRecord | null>;
  /** The tenant's clients, sorted by clientId. */
  listClients(tenantId: string): Promise<ClientRecord[]>;
  /**
   * Replaces the client's secret digest, at a new generation: the old secret
   * is unknown from then on. Publishes `client-changed`.
   * @returns the updated client; null when there is none.
   */
  rotateClientSecret(
    clientId: string,
    secretDigest: string,
    now: number,
  ): Promise<ClientRecord | null>;
  /**
   * Removes the client and every key of it, atomically, taking a new
   * generation; publishes `client-changed` (as `removeOrgTenant` does for each client).
   * @returns the ids of the keys removed with it, sorted; null when there is no such client.
   */
  removeClient(clientId: string): Promise<string[] | null>;
}
