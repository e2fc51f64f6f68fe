/**
 * The IdP index's upgrade, run when the Redis store starts. Versions before
 * issue 42 kept `idp-issuers` (issuer → tenant); the issuer + client id index
 * (`idp-clients`, `idpClientKey`) replaced it, and a record stored before the
 * upgrade is in neither the new index nor anything that reads the old one:
 * another tenant could register the same issuer and client id. So every
 * start adds the entry of each record the index lacks (HSETNX: an entry
 * present, whoever holds it, is kept), in scripts of at most
 * {@link BATCH} records each (atomic with the IdP writes of other
 * instances), then deletes `idp-issuers`. Running it again changes nothing.
 */
import { attempt } from './redis-attempt.js';
import type { RedisStoreContext } from './redis-context.js';

/** Records per script call: bounds how long one call holds Redis. */
const BATCH = 200;

/**
 * Indexes every stored IdP record by its issuer and client id where the
 * index lacks it, and deletes the index of versions before.
 * @returns how many entries were added
 * @throws GatewayError `unavailable` when Redis fails (the start fails closed)
 */
export async function indexStoredIdps(context: RedisStoreContext): Promise<number> {
  const { redis, keys } = context;
  const tenantIds = await attempt(() => redis.smembers(keys.tenants));
  let added = 0;
  for (let start = 0; start < tenantIds.length || start === 0; start += BATCH) {
    const batch = tenantIds.slice(start, start + BATCH);
    const reply = await attempt(() =>
      redis.indexIdpClients(
        2 + batch.length,
        keys.idpClients,
        keys.idpIssuersBefore,
        ...batch.map((tenantId) => keys.idp(tenantId)),
        ...batch,
      ),
    );
    added += Number(reply);
  }
  if (added > 0) await context.replicated(keys.idpClients);
  return added;
}
