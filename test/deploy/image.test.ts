/**
 * Issue 21: the image. No Docker daemon runs here, so the Dockerfile and
 * .dockerignore are read as the builder would read them: the build context
 * is an allow-list that lets no config, key or PEM in; every COPY from the
 * context names something the allow-list lets through; the image runs as a
 * numeric non-root user and its HEALTHCHECK is the CLI's `health` verb.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageNodeFlags } from '../../bench/image-flags.js';

const ROOT = join(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
/** Dockerfile instructions, continuation lines joined. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

describe('.dockerignore', () => {
  it('starts by excluding everything and lets only the build’s inputs back in', () => {
    expect(ignore[0]).toBe('*');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1));
    expect(allowed.sort()).toEqual([
      'config/production.yaml',
      'console/',
      'package-lock.json',
      'package.json',
      'proto/',
      'scripts/build-console.mjs',
      'src/',
      'tsconfig.json',
    ]);
  });

  it('keeps keys and PEM files out even under an allowed folder', () => {
    expect(ignore).toContain('**/*.pem');
    expect(ignore).toContain('**/keys/');
  });
});

describe('Dockerfile', () => {
  const fromContext = instructions
    .filter((l) => /^COPY /.test(l) && !l.includes('--from='))
    .flatMap((l) => l.split(/\s+/).slice(1, -1));

  it('copies from the context only what .dockerignore lets in: of config/, the production example only', () => {
    expect(fromContext.sort()).toEqual([
      'config/production.yaml',
      'console',
      'package-lock.json',
      'package.json',
      'package.json',
      'proto',
      'scripts/build-console.mjs',
      'src',
      'tsconfig.json',
    ]);
    expect(dockerfile).not.toMatch(/COPY\s+config\/?\s/);
    expect(dockerfile).not.toContain('demo-seed');
  });

  it('runs as a numeric non-root user', () => {
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users).toHaveLength(1);
    expect(users[0]).toMatch(/^USER [1-9]\d*(:[1-9]\d*)?$/);
  });

  it('its HEALTHCHECK is the CLI’s health verb, which reads the mounted config', () => {
    const check = instructions.find((l) => l.startsWith('HEALTHCHECK '));
    expect(check).toMatch(/CMD \["node", "dist\/cli\.js", "health"\]$/);
    expect(instructions).toContain(
      'ENTRYPOINT ["node", "--max-semi-space-size=16", "dist/cli.js"]',
    );
    expect(dockerfile).toMatch(/GATEWAY_CONFIG=\/etc\/tenant-gateway\/gateway\.yaml/);
  });

  it('starts Node with the young generation bounded, as the benchmarks run it', () => {
    // Issue 30: Node 22 and 24 size it from the memory they see (64 MB on a
    // large host, 2 MB under a small limit); the image fixes it.
    expect(imageNodeFlags()).toEqual(['--max-semi-space-size=16']);
  });
});
