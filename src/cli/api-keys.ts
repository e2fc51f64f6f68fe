/**
 * `client key add|list|remove`: a machine client's API keys, by the
 * operations the identity API runs too (`identity/api-keys.ts`). A key is
 * printed once, by `add`, and stored only as its SHA-256 digest
 * (`auth/clients/secrets.ts`); lists show its id, never the key. What it prints is
 * the API's representation (`api/client-representations.ts`) with the key's
 * client and tenant, which the API has in its path.
 */
import { createdKey, keyView } from '../api/client-representations.js';
import type { LoadedConfig } from '../config/index.js';
import { addApiKey, removeApiKey } from '../identity/api-keys.js';
import type { ApiKeyRecord } from '../store/types.js';
import { clientDeps, existingClient } from './clients.js';
import { expiresAtOption, operator, print, withCore } from './store-command.js';
import { UsageError } from './usage-error.js';

/** A representation of the API's, with the key's client and tenant. */
const ofClient = <T>(key: ApiKeyRecord, view: T) => ({
  ...view,
  client_id: key.clientId,
  tenant_id: key.tenantId,
});

export async function keyAdd(
  loaded: LoadedConfig,
  clientId: string,
  options: { expiresAt?: string },
): Promise<void> {
  const expiresAt = expiresAtOption(options.expiresAt);
  await withCore(loaded, async (core) => {
    const client = await existingClient(core, clientId);
    const { key, apiKey } = await addApiKey(
      clientDeps(loaded, core),
      operator(),
      client,
      expiresAt,
    );
    print(ofClient(key, createdKey(key, apiKey)));
  });
}

export async function keyList(loaded: LoadedConfig, clientId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await existingClient(core, clientId);
    print((await core.store.apiKeys.listApiKeys(clientId)).map((k) => ofClient(k, keyView(k))));
  });
}

export async function keyRemove(
  loaded: LoadedConfig,
  clientId: string,
  keyId: string,
): Promise<void> {
  await withCore(loaded, async (core) => {
    const client = await existingClient(core, clientId);
    if (!(await removeApiKey(clientDeps(loaded, core), operator(), client, keyId))) {
      throw new UsageError(`client ${clientId} has no key ${keyId}`);
    }
    print({ key_id: keyId, client_id: clientId, removed: true });
  });
}
