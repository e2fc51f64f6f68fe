/** A machine client made straight in a gateway's store, with its secret, for the OAuth tests. */
import { newClientId, newClientSecret, secretDigest } from '../../src/auth/secrets.js';
import type { Store } from '../../src/store/types.js';

export interface MachineClient {
  clientId: string;
  clientSecret: string;
}

export async function makeClient(
  store: Store,
  tenantId: string,
  scopes: string[],
  options: { expiresAt?: number } = {},
): Promise<MachineClient> {
  const clientId = newClientId();
  const clientSecret = newClientSecret();
  const created = await store.createClient({
    clientId,
    tenantId,
    name: 'test client',
    scopes,
    secretDigest: secretDigest(clientSecret),
    createdAt: Math.floor(Date.now() / 1000),
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
  });
  if (created === null) throw new Error(`no org tenant ${tenantId}`);
  return { clientId, clientSecret };
}

/** `POST /1/oauth/token` with `client_secret_post`. */
export function clientCredentials(
  url: string,
  client: MachineClient,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...extra,
    }).toString(),
  });
}

/** A client token, or a throw. */
export async function clientToken(url: string, client: MachineClient): Promise<string> {
  const res = await clientCredentials(url, client);
  if (res.status !== 200) throw new Error(`client token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}
