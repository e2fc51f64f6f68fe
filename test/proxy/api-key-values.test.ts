/**
 * Issue 42, finding 10: which header values carry an API key
 * (`src/proxy/decide/api-key-values.ts`), on real keys made as `client key
 * add` makes them: as sent, percent-escaped, truncated, in Basic credentials
 * of `Authorization` (any scheme but Bearer); and what is not a key: shorter
 * values, `tgk_` not followed by a key id, a bearer token.
 */
import { describe, expect, it } from 'vitest';
import { newApiKey } from '../../src/auth/clients/secrets.js';
import {
  authorizationCarriesApiKey,
  carriesApiKey,
} from '../../src/proxy/decide/api-key-values.js';

const { apiKey } = newApiKey();
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('carriesApiKey', () => {
  it('finds a key as sent, percent-escaped, truncated, among others, in a list', () => {
    for (const value of [
      apiKey,
      `Token ${apiKey}`,
      `sid=1; k=${apiKey}`,
      `k=${apiKey.replaceAll('_', '%5F')}`,
      `k=${apiKey.replaceAll('_', '%5f')}`,
      `${apiKey.slice(0, 30)}${' '.repeat(50)}`,
      `"${apiKey}"`,
      `${'A'.repeat(40)}${apiKey}`,
      `x-${apiKey}`,
    ])
      expect([value, carriesApiKey(value)]).toEqual([value, true]);
    expect(carriesApiKey(['a', `x ${apiKey}`])).toBe(true);
  });

  it('passes what is not a key', () => {
    for (const value of [
      'tgk_abcdefghijklmnop_',
      `${'A'.repeat(40)}tgk_abcdefghijklmno_${'B'.repeat(40)}`,
      `${'A'.repeat(40)}tgk-abcdefghijklmnop_${'B'.repeat(40)}`,
      `TGK_${apiKey.slice(4)}`,
      `tgk_ABCDEFGHIJKLMNOP_${'x'.repeat(60)}`,
      'x'.repeat(200),
    ])
      expect([value, carriesApiKey(value)]).toEqual([value, false]);
    expect(carriesApiKey(undefined)).toBe(false);
  });
});

describe('authorizationCarriesApiKey', () => {
  it('finds a key under any scheme, and inside base64 credentials of any scheme but Bearer', () => {
    for (const value of [
      `Token ${apiKey}`,
      `Bearer ${apiKey}`,
      `Basic ${b64(`svc:${apiKey}`)}`,
      `basic  ${b64(`${apiKey}:`)}`,
      `Custom ${b64(apiKey)}`,
    ])
      expect([value, authorizationCarriesApiKey(value)]).toEqual([value, true]);
  });

  it('passes other credentials, and never decodes a bearer token', () => {
    for (const value of [
      `Basic ${b64(`alice@example.com:${'p'.repeat(80)}`)}`,
      `Bearer ${b64(`x ${apiKey}`)}`,
      `Token ${'x'.repeat(80)}`,
    ])
      expect([value, authorizationCarriesApiKey(value)]).toEqual([value, false]);
    expect(authorizationCarriesApiKey(undefined)).toBe(false);
  });
});
