/**
 * Secrets the gateway must use again in plaintext, kept sealed: a tenant's
 * IdP client secret is sent to the IdP's token endpoint, so it cannot be
 * stored as a digest like a machine client's (`secrets.ts`). It is sealed with
 * AES-256-GCM under the key of `sso.secretsKeyFile` (32 random bytes, base64),
 * bound to its tenant: the tenant id is the additional authenticated data, so
 * a sealed secret copied into another tenant's record does not open.
 *
 * Sealed form: base64url `iv.ciphertext.tag` (a random 96-bit IV per seal,
 * the 128-bit GCM tag). The store holds only that; the key never leaves the
 * file and the process that read it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { GatewayError } from '../../errors.js';
import { KeyLoadError } from '../tokens/keys.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Seals and opens secrets bound to a tenant, under one key. */
export interface SecretSealer {
  /** The sealed form of `plaintext`, for `tenantId` only. */
  seal(plaintext: string, tenantId: string): string;
  /**
   * The plaintext of a secret sealed for `tenantId` under this key.
   * @throws GatewayError `internal_error` when it does not open: another key,
   * another tenant, or altered. The message says which setting to look at,
   * never anything of the secret.
   */
  open(sealed: string, tenantId: string): string;
}

/** A sealer over a 32-byte key. @throws RangeError for a key of another length. */
export function createSecretSealer(key: Uint8Array): SecretSealer {
  if (key.length !== KEY_BYTES) throw new RangeError(`The key must be ${KEY_BYTES} bytes.`);
  const secretKey = Buffer.from(key);
  return {
    seal(plaintext, tenantId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secretKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(tenantId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [iv, ciphertext, cipher.getAuthTag()]
        .map((part) => part.toString('base64url'))
        .join('.');
    },
    open(sealed, tenantId) {
      const parts = sealed.split('.');
      if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) throw unopenable();
      const [iv, ciphertext, tag] = parts.map((part) => Buffer.from(part, 'base64url')) as [
        Buffer,
        Buffer,
        Buffer,
      ];
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw unopenable();
      try {
        const decipher = createDecipheriv('aes-256-gcm', secretKey, iv, {
          authTagLength: TAG_BYTES,
        });
        decipher.setAAD(Buffer.from(tenantId, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw unopenable();
      }
    },
  };
}

/**
 * The sealer of `sso.secretsKeyFile` (or of `setting`, e.g. `mfa.totp.secretsKeyFile`): the file holds 32 random bytes, base64
 * (`openssl rand -base64 32`), surrounding whitespace ignored.
 * @throws KeyLoadError when the file cannot be read or holds no such key.
 */
export async function loadSecretSealer(
  file: string,
  setting = 'sso.secretsKeyFile',
): Promise<SecretSealer> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new KeyLoadError(
      `${setting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return createSecretSealer(keyFromText(text, file, setting));
}

function keyFromText(text: string, file: string, setting: string): Buffer {
  const encoded = text.trim();
  const key = Buffer.from(encoded, 'base64');
  // Buffer.from skips what is not base64: re-encoding shows whether it was all key.
  const exact =
    /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) &&
    key.toString('base64').replace(/=+$/, '') ===
      encoded.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (!exact || key.length !== KEY_BYTES) {
    throw new KeyLoadError(
      `${setting}: ${file} must hold ${KEY_BYTES} random bytes in base64 (openssl rand -base64 ${KEY_BYTES} > ${file})`,
    );
  }
  return key;
}

function unopenable(): GatewayError {
  return new GatewayError(
    'internal_error',
    "A sealed IdP client secret does not open with this key: sso.secretsKeyFile is not the key it was sealed with, or the record was altered (set the tenant's IdP secret again).",
  );
}
