import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyLoadError } from '../../src/auth/tokens/keys.js';
import { createSecretSealer, loadSecretSealer } from '../../src/auth/federation/sealed-secrets.js';
import { GatewayError } from '../../src/errors.js';

const SECRET = 'idp-client-secret-Ünïcode-✓';

function refusedToOpen(open: () => string): GatewayError {
  let thrown: unknown;
  try {
    open();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(GatewayError);
  const err = thrown as GatewayError;
  expect(err.code).toBe('internal_error');
  expect(err.message).toMatch(/sso\.secretsKeyFile/);
  expect(err.message).not.toContain(SECRET);
  return err;
}

describe('sealed secrets', () => {
  const sealer = createSecretSealer(randomBytes(32));

  it('opens what it sealed for the same tenant; the sealed form is base64url iv.ct.tag', () => {
    const sealed = sealer.seal(SECRET, 'acme');
    expect(sealed).toMatch(/^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain(SECRET);
    expect(sealer.open(sealed, 'acme')).toBe(SECRET);
  });

  it('seals the same secret differently each time (a fresh IV)', () => {
    expect(sealer.seal(SECRET, 'acme')).not.toBe(sealer.seal(SECRET, 'acme'));
  });

  it('refuses another key', () => {
    const other = createSecretSealer(randomBytes(32));
    refusedToOpen(() => other.open(sealer.seal(SECRET, 'acme'), 'acme'));
  });

  it('refuses another tenant: a sealed secret copied into another record does not open', () => {
    refusedToOpen(() => sealer.open(sealer.seal(SECRET, 'acme'), 'globex'));
  });

  it('refuses an altered IV, ciphertext or tag, and malformed input', () => {
    const sealed = sealer.seal(SECRET, 'acme');
    const parts = sealed.split('.');
    for (let i = 0; i < 3; i++) {
      const altered = [...parts];
      const bytes = Buffer.from(altered[i]!, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      altered[i] = bytes.toString('base64url');
      refusedToOpen(() => sealer.open(altered.join('.'), 'acme'));
    }
    for (const bad of ['', 'a.b', `${sealed}.x`, sealed.replace('.', '!'), SECRET]) {
      refusedToOpen(() => sealer.open(bad, 'acme'));
    }
  });

  it('takes 32-byte keys only', () => {
    expect(() => createSecretSealer(randomBytes(16))).toThrow(RangeError);
  });
});

describe('loadSecretSealer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sealed-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads 32 bytes of base64 (as openssl rand -base64 32 writes them, newline and all)', async () => {
    const key = randomBytes(32);
    const fromFile = await loadSecretSealer(file('key', `${key.toString('base64')}\n`));
    expect(createSecretSealer(key).open(fromFile.seal(SECRET, 'acme'), 'acme')).toBe(SECRET);
    const urlSafe = await loadSecretSealer(file('key-url', key.toString('base64url')));
    expect(urlSafe.open(fromFile.seal(SECRET, 'acme'), 'acme')).toBe(SECRET);
  });

  it('refuses a missing file, a short key and text that is not base64, naming the setting', async () => {
    const refusals = [
      join(dir, 'absent'),
      file('short', randomBytes(16).toString('base64')),
      file('long', randomBytes(48).toString('base64')),
      file('text', 'not a key at all, but long enough to be 32 bytes'),
      file('empty', ''),
    ];
    for (const path of refusals) {
      const err = await loadSecretSealer(path).catch((e: unknown) => e);
      expect(err, path).toBeInstanceOf(KeyLoadError);
      expect((err as Error).message).toMatch(/^sso\.secretsKeyFile: /);
    }
  });
});
