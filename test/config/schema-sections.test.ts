/**
 * The config schema by section (issue 31): every default written once, and
 * each section's rules beside it, so that a config's problems come in the
 * order of its keys.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema, parseConfigText } from '../../src/config/index.js';
import { STRIP_HEADERS_DEFAULTS } from '../../src/config/schema/headers.js';
import { UPSTREAM_POOL_DEFAULTS } from '../../src/config/schema/limits.js';
import { REDIS_DEFAULTS } from '../../src/config/schema/store.js';
import { CONFIG_SOURCE, configErrorOf } from '../support/config-problems.js';

/**
 * Key paths of the objects whose default is written out (`.default({...})`)
 * rather than made of their keys' own defaults (`.prefault({})`): a copy that
 * stays right only as long as someone remembers to change both.
 */
function writtenOutDefaults(schema: z.ZodType, path: string, out: string[]): string[] {
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodPrefault) {
    const inner = schema.def.innerType as z.ZodType;
    const value = (schema.def as { defaultValue: unknown }).defaultValue;
    const madeOfKeys =
      schema instanceof z.ZodPrefault &&
      typeof value === 'object' &&
      value !== null &&
      Object.keys(value).length === 0;
    if (inner instanceof z.ZodObject && !madeOfKeys) out.push(path);
    return writtenOutDefaults(inner, path, out);
  }
  if (schema instanceof z.ZodOptional)
    return writtenOutDefaults(schema.unwrap() as z.ZodType, path, out);
  if (schema instanceof z.ZodPipe) return writtenOutDefaults(schema.out as z.ZodType, path, out);
  if (schema instanceof z.ZodArray) {
    return writtenOutDefaults(schema.element as z.ZodType, `${path}[]`, out);
  }
  if (schema instanceof z.ZodObject) {
    for (const [key, child] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      writtenOutDefaults(child, path === '' ? key : `${path}.${key}`, out);
    }
  }
  return out;
}

const problemsOf = (text: string): string[] => configErrorOf(text).problems;

describe('defaults', () => {
  it('an omitted section, or object inside one, is its keys’ defaults, never a copy of them', () => {
    expect(writtenOutDefaults(configSchema, '', [])).toEqual([]);
    // The walk does reach nested objects: the whole default config is made of keys' defaults.
    expect(configSchema.parse({}).limits.login.perEmail).toBe(10);
    expect(configSchema.parse({}).log.buffer).toEqual({ bytes: 8192, flushMs: 1000 });
  });

  it('the defaults other modules fall back to are the schema’s own', () => {
    const redis = configSchema.parse({ store: { redis: { url: 'redis://cache:6379' } } }).store
      .redis;
    expect(redis).toMatchObject(REDIS_DEFAULTS);
    const pool = configSchema.parse({ upstreamPool: {} }).upstreamPool;
    expect(pool).toEqual(UPSTREAM_POOL_DEFAULTS);
    expect(configSchema.parse({}).stripHeaders).toEqual(STRIP_HEADERS_DEFAULTS);
  });
});

describe('rules beside their sections', () => {
  it('lists problems in the order of the keys: a route’s rules with the route, rules across sections last', () => {
    const text = [
      'listen: { port: 9090, opsEndpoints: true }',
      'admin: { port: 9090 }',
      'upstreamPool: { maxConnections: 4, maxPerTenant: 9 }',
      'identityHeaders: { tenantId: X-A, userId: x-a }',
      'routes:',
      '  - { prefix: /1/x, upstream: "http://a", timeoutMs: 0 }',
      '  - { prefix: /healthz, upstream: "http://a" }',
      '  - { prefix: /1/x, upstream: "http://a", tls: {} }',
      'log: { level: loud }',
    ].join('\n');
    const reserved = "is reserved for the gateway's own endpoints (/1, /.well-known, /auth/verify)";
    expect(problemsOf(text)).toEqual([
      'upstreamPool.maxPerTenant: must not exceed upstreamPool.maxConnections (4)',
      'identityHeaders: names must differ',
      'routes[0].timeoutMs: must be at least 1',
      `routes[0].prefix: ${reserved}`,
      `routes[2].prefix: ${reserved}`,
      'routes[2].tls: applies to an https:// upstream',
      'routes[2].prefix: duplicates routes[0].prefix',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
      // listen.opsEndpoints against routes, then the listeners against each other.
      'routes[1].prefix: is a path the gateway answers itself with listen.opsEndpoints (/healthz, /readyz, /metrics, in any letter case): the upstream would not see it; serve them on admin instead, or move the route',
      'admin.port: is listen.port too (9090): each listener needs a port of its own',
    ]);
  });
});

describe('mail and second factors (issue 45)', () => {
  it('mail needs publicUrl; verifyEmail needs mail; a bad SMTP URL or From is named', () => {
    expect(
      problemsOf('mail: { smtp: "smtp://mail.internal:587", from: "no-reply@example.com" }'),
    ).toEqual([
      "mail: needs publicUrl: every mailed link is built from it, never from a request's Host",
    ]);
    expect(problemsOf('signup: { enabled: true, verifyEmail: true }')).toEqual([
      'signup.verifyEmail: needs mail: the verification link is mailed',
    ]);
    const bad = problemsOf(
      'publicUrl: https://gw.example.com\nmail: { smtp: "http://mail.internal", from: "a <b" }',
    );
    expect(bad).toEqual([
      expect.stringMatching(/^mail\.smtp: must be an smtp:\/\/ or smtps:\/\/ URL/),
      expect.stringMatching(/^mail\.from: must be an address/),
    ]);
    const ok = parseConfigText(
      'publicUrl: https://gw.example.com\nmail: { smtp: "smtps://u:p@mail.internal", from: "Gateway <no-reply@example.com>" }',
      CONFIG_SOURCE,
      {},
    );
    expect(ok.mail).toMatchObject({ sendTimeoutMs: 30_000, attempts: 5 });
    expect(ok.signup.verifyEmail).toBeUndefined();
  });

  it('passkeys need sessions and publicUrl, and an rpId publicUrl is under', () => {
    expect(problemsOf('mfa: { passkeys: { enabled: true } }')).toEqual([
      'mfa.passkeys.enabled: needs sessions.enabled: true (a passkey signs in on the sign-in page)',
      'mfa.passkeys.enabled: needs publicUrl: the origin passkeys are bound to',
    ]);
    expect(
      problemsOf(
        'publicUrl: https://gw.example.com\nsessions: { enabled: true }\nmfa: { passkeys: { enabled: true, rpId: other.example } }',
      ),
    ).toEqual(['mfa.passkeys.rpId: must be gw.example.com or a domain it is under']);
    const ok = parseConfigText(
      'publicUrl: https://gw.example.com\nsessions: { enabled: true }\nmfa: { passkeys: { enabled: true, rpId: example.com }, requiredForAdmins: true }',
      CONFIG_SOURCE,
      {},
    );
    expect(ok.mfa).toMatchObject({ totp: { enabled: false }, requiredForAdmins: true });
    expect(ok.limits.secondFactor).toEqual({ perUser: 5, windowSeconds: 900 });
  });
});
