/**
 * A machine client made straight in a gateway's store, with its secret, for
 * the OAuth tests: recorded as the operator's (as `client add` makes it), so
 * only `authorization.clientScopes` bounds its scopes, unless `createdBy` says
 * otherwise.
 */
import {
  newApiKey,
  newClientId,
  newClientSecret,
  secretDigest,
} from '../../src/auth/clients/secrets.js';
import type { ClientMaker, Store } from '../../src/store/types.js';

export interface MachineClient {
  clientId: string;
  clientSecret: string;
}

export async function makeClient(
  store: Store,
  tenantId: string,
  scopes: string[],
  options: { expiresAt?: number; createdBy?: ClientMaker | 'nobody' } = {},
): Promise<MachineClient> {
  const createdBy = options.createdBy ?? 'operator';
  const clientId = newClientId();
  const clientSecret = newClientSecret();
  const created = await store.clients.createClient({
    clientId,
    tenantId,
    name: 'test client',
    scopes,
    secretDigest: secretDigest(clientSecret),
    createdAt: Math.floor(Date.now() / 1000),
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
    // 'nobody': a client stored before its maker was recorded.
    ...(createdBy === 'nobody' ? {} : { createdBy }),
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

/** An API key of `clientId`, made straight in the store as `client key add` makes it. */
export async function makeApiKey(
  store: Store,
  clientId: string,
  options: { expiresAt?: number } = {},
): Promise<{ keyId: string; apiKey: string }> {
  const { keyId, apiKey } = newApiKey();
  const created = await store.apiKeys.createApiKey({
    keyId,
    clientId,
    digest: secretDigest(apiKey),
    createdAt: Math.floor(Date.now() / 1000),
    ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
  });
  if (created === null) throw new Error(`no client ${clientId}`);
  return { keyId, apiKey };
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `apiKey` with the character at `index` changed, and its checksum made
 * right again, as an attacker who knows the format would (index in the
 * checksum itself: left wrong).
 */
export function forgedApiKey(apiKey: string, index: number): string {
  const chars = [...apiKey];
  const was = chars[index] as string;
  const alphabet = index < 20 ? 'abcdefghijklmnopqrstuvwxyz234567' : BASE62;
  chars[index] = alphabet[(alphabet.indexOf(was) + 1) % alphabet.length] as string;
  const changed = chars.join('');
  const bodyLength = changed.length - 7;
  if (index >= bodyLength) return changed;
  const body = changed.slice(0, bodyLength);
  return `${body}_${crcBase62(body)}`;
}

function crcBase62(text: string): string {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  let value = (crc ^ 0xffffffff) >>> 0;
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}
