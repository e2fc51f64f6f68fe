import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  generateKeyFile,
  isSameKey,
  isUsableKid,
  KeyLoadError,
  loadKeySet,
} from '../../src/auth/tokens/keys.js';

const quiet = { warn() {} };
const pem = (type: 'ed25519' | 'p256') =>
  (type === 'ed25519'
    ? generateKeyPairSync('ed25519').privateKey
    : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
  ).export({ type: 'pkcs8', format: 'pem' }) as string;

describe('key directory', () => {
  it('loads every key; the name sorting last signs; Ed25519 → EdDSA, P-256 → ES256', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    writeFileSync(join(dir, '2026-01.pem'), pem('p256'));
    writeFileSync(join(dir, '2026-02.pem'), pem('ed25519'));
    writeFileSync(join(dir, 'README.txt'), 'not a key');
    const keys = await loadKeySet(dir, quiet);
    expect([...keys.byKid.keys()]).toEqual(['2026-01', '2026-02']);
    expect(keys.signing).toMatchObject({ kid: '2026-02', alg: 'EdDSA' });
    expect(keys.byKid.get('2026-01')?.alg).toBe('ES256');
    expect(keys.jwks.keys.map((k) => k.kid)).toEqual(['2026-01', '2026-02']);
  });

  it('reads a Kubernetes Secret volume: keys are symlinks into ..data, and nothing is generated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-secret-'));
    const data = join(dir, '..2026_11_22_00_00_00.123');
    mkdirSync(data);
    writeFileSync(join(data, 'signing-1.pem'), pem('ed25519'));
    symlinkSync('..2026_11_22_00_00_00.123', join(dir, '..data'));
    symlinkSync('..data/signing-1.pem', join(dir, 'signing-1.pem'));
    const keys = await loadKeySet(dir, quiet);
    expect([...keys.byKid.keys()]).toEqual(['signing-1']);
    expect(readdirSync(dir).sort()).toEqual([
      '..2026_11_22_00_00_00.123',
      '..data',
      'signing-1.pem',
    ]);
  });

  it('refuses a file that is not a usable private key, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    writeFileSync(
      join(dir, 'broken.pem'),
      '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n',
    );
    await expect(loadKeySet(dir, quiet)).rejects.toThrow(KeyLoadError);
    await expect(loadKeySet(dir, quiet)).rejects.toThrow(/broken\.pem/);
    const rsa = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    writeFileSync(
      join(rsa, 'rsa.pem'),
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
        type: 'pkcs8',
        format: 'pem',
      }) as string,
    );
    await expect(loadKeySet(rsa, quiet)).rejects.toThrow(/unsupported key type rsa/);
  });

  it('generates a key, warned, into a missing directory', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tg-keys-')), 'new');
    const warnings: string[] = [];
    const keys = await loadKeySet(dir, { warn: (_o, msg) => warnings.push(msg) });
    expect(keys.byKid.size).toBe(1);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(warnings.join()).toMatch(/generated/);
  });

  it('processes starting at once on an empty directory all load, and never read a half-written key', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tg-keys-')), 'shared');
    const loads = await Promise.allSettled(Array.from({ length: 8 }, () => loadKeySet(dir, quiet)));
    expect(loads.filter((l) => l.status === 'rejected')).toEqual([]);
    const files = readdirSync(dir);
    expect(files.every((name) => name.endsWith('.pem'))).toBe(true); // no temporary left
    // Named by the second: one key, or two if the loads straddled a second.
    expect(files.length).toBeGreaterThanOrEqual(1);
    expect(files.length).toBeLessThanOrEqual(2);
    const all = await loadKeySet(dir, quiet);
    expect(all.byKid.size).toBe(files.length);
  });

  it('keys written at once get names of their own, each sorting after the one before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    const files = await Promise.all(Array.from({ length: 4 }, () => generateKeyFile(dir)));
    expect(new Set(files).size).toBe(4);
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => basename(f)).sort());
    expect((await loadKeySet(dir, quiet)).byKid.size).toBe(4);
  });

  it('on a reload, refuses a directory without keys instead of generating one into it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    await expect(loadKeySet(dir, quiet, { reloading: true })).rejects.toThrow(KeyLoadError);
    await expect(loadKeySet(dir, quiet, { reloading: true })).rejects.toThrow(/no key files/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('tells a re-read unchanged key from one replaced under the same name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
    writeFileSync(join(dir, 'k1.pem'), pem('ed25519'));
    writeFileSync(join(dir, 'k2.pem'), pem('p256'));
    const first = await loadKeySet(dir, quiet);
    const again = await loadKeySet(dir, quiet);
    expect(isSameKey(first.byKid.get('k1')!, again.byKid.get('k1'))).toBe(true);
    expect(isSameKey(first.byKid.get('k2')!, again.byKid.get('k2'))).toBe(true);
    writeFileSync(join(dir, 'k1.pem'), pem('ed25519'));
    const replaced = await loadKeySet(dir, quiet);
    expect(isSameKey(first.byKid.get('k1')!, replaced.byKid.get('k1'))).toBe(false);
    expect(isSameKey(first.byKid.get('k1')!, replaced.byKid.get('k2'))).toBe(false);
    expect(isSameKey(first.byKid.get('k1')!, undefined)).toBe(false);
  });

  it('a kid from a token is usable only if a key file could carry it', () => {
    for (const kid of ['2026-02', 'signing-1', '20261123T210000Z_0001'])
      expect(isUsableKid(kid)).toBe(true);
    for (const kid of [undefined, '', 42, '../keys/a', 'a/b', 'x'.repeat(129), 'k\u0000'])
      expect(isUsableKid(kid)).toBe(false);
  });
});
