/**
 * Issue 43, item 4: the one reader of a request's credential, against the
 * table of spellings in docs/security.md ("Credential spellings"): strict to
 * accept a bearer token (RFC 6750 §2.1: `Bearer 1*SP b64token`), lenient to
 * recognise the Bearer scheme (any case, after any whitespace, ended by
 * anything that is not a token character), so that whatever could be read as
 * a bearer is verified or refused. `test/proxy/credential-spellings.test.ts`
 * sends the same spellings through every entry way.
 */
import { describe, expect, it } from 'vitest';
import {
  isExactBearer,
  namesBearer,
  presentsCredential,
  readCredential,
  readTokenCredential,
  type RequestCredential,
} from '../../src/auth/credentials/read-credential.js';
import { tokenRefusalOf } from '../../src/auth/tokens/token-refusals.js';
import { GatewayError } from '../../src/errors.js';

const KEY = `tgk_${'a'.repeat(16)}_${'b'.repeat(43)}`;

/** What the reader answers, or the refusal's code and reason. */
function answer(read: () => RequestCredential): RequestCredential | string {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return `${err.code}${err.code === 'invalid_token' ? ` ${tokenRefusalOf(err)}` : ''}`;
  }
}

const BAD_BEARER = 'invalid_token not_bearer';

/** Authorization spelling → the reader's answer where only tokens are taken. */
const SPELLINGS: [string, string | undefined, RequestCredential | string][] = [
  ['absent', undefined, { kind: 'none' }],
  ['empty', '', { kind: 'none' }],
  ['whitespace only', ' \t', { kind: 'none' }],
  ['exact', 'Bearer abc.def-_~+/==', { kind: 'bearer', token: 'abc.def-_~+/==' }],
  ['lower case', 'bearer abc', { kind: 'bearer', token: 'abc' }],
  ['upper case', 'BEARER abc', { kind: 'bearer', token: 'abc' }],
  ['two spaces', 'Bearer  abc', { kind: 'bearer', token: 'abc' }],
  ['leading spaces (not part of the value)', '  Bearer abc', { kind: 'bearer', token: 'abc' }],
  ['trailing space and tab', 'Bearer abc \t', { kind: 'bearer', token: 'abc' }],
  ['Bearer alone', 'Bearer', BAD_BEARER],
  ['Bearer and a tab', 'Bearer\t', BAD_BEARER],
  ['a tab after Bearer', 'Bearer\tabc', BAD_BEARER],
  ['U+00A0 after Bearer', 'Bearer\u00a0abc', BAD_BEARER],
  ['U+00A0 in UTF-8 after Bearer', 'Bearer\u00c2\u00a0abc', BAD_BEARER],
  ['U+00A0 before Bearer', '\u00a0Bearer abc', BAD_BEARER],
  ['two tokens', 'Bearer abc def', BAD_BEARER],
  ['a slash after Bearer', 'Bearer/abc', BAD_BEARER],
  ['a quoted token', 'Bearer "abc"', BAD_BEARER],
  ['a token with = inside', 'Bearer a=b', BAD_BEARER],
  ['Basic', 'Basic dXNlcjpwYXNz', { kind: 'other', scheme: 'Basic' }],
  ['another scheme', 'Token abc', { kind: 'other', scheme: 'Token' }],
  ['a longer scheme', 'Bearerish abc', { kind: 'other', scheme: 'Bearerish' }],
  ['a scheme with a dot', 'Bearer.abc', { kind: 'other', scheme: 'Bearer.abc' }],
  ['Digest', 'Digest username="u"', { kind: 'other', scheme: 'Digest' }],
  ['no scheme', '"Bearer" abc', { kind: 'other', scheme: '' }],
];

describe('readTokenCredential: where only tokens are taken', () => {
  it.each(SPELLINGS)('%s', (_name, authorization, expected) => {
    expect(answer(() => readTokenCredential(authorization))).toEqual(expected);
  });

  it('an API key is a token like any other', () => {
    expect(readTokenCredential(`Bearer ${KEY}`)).toEqual({ kind: 'bearer', token: KEY });
  });
});

describe('readCredential: where API keys are on', () => {
  it.each(SPELLINGS)(
    '%s, no API-key header: as where only tokens are taken',
    (_n, auth, expected) => {
      expect(answer(() => readCredential(auth, undefined))).toEqual(expected);
    },
  );

  it.each(['Bearer ', 'bearer ', 'Bearer  '])('an API key after %j is the key', (scheme) => {
    expect(readCredential(`${scheme}${KEY}`, undefined)).toEqual({ kind: 'api_key', key: KEY });
  });

  it.each(SPELLINGS.filter(([, auth]) => auth === undefined || !namesBearer(auth)))(
    '%s beside the API-key header: the key',
    (_name, authorization) => {
      expect(readCredential(authorization, KEY)).toEqual({ kind: 'api_key', key: KEY });
    },
  );

  it.each(SPELLINGS.filter(([, auth]) => auth !== undefined && namesBearer(auth)))(
    '%s beside the API-key header: two credentials, 400',
    (_name, authorization) => {
      expect(answer(() => readCredential(authorization, KEY))).toBe('invalid_request');
    },
  );
});

describe('presentsCredential: what is never anonymous', () => {
  it.each(SPELLINGS)('%s', (_name, authorization, expected) => {
    const gateways = typeof expected === 'string' || expected.kind === 'bearer';
    expect(presentsCredential(authorization, undefined)).toBe(gateways);
    expect(presentsCredential(authorization, KEY)).toBe(true);
  });
});

describe('isExactBearer: the steady state, the reader’s answer for a token that verified', () => {
  it.each([
    ['Bearer abc', false, true],
    ['Bearer abc', true, true],
    [`Bearer ${KEY}`, false, true],
    [`Bearer ${KEY}`, true, false],
    ['Bearer  abc', false, false],
    ['bearer abc', false, false],
    ['Bearer\tabc', false, false],
    ['Bearer\u00a0abc', false, false],
    ['Basic abc', false, false],
  ] as const)('%j (keys on: %s) → %s', (authorization, keys, exact) => {
    expect(isExactBearer(authorization, keys)).toBe(exact);
    // Exact means: the reader reads what follows `Bearer ` as the token (a b64token here).
    if (exact) {
      const read = keys
        ? readCredential(authorization, undefined)
        : readTokenCredential(authorization);
      expect(read).toEqual({ kind: 'bearer', token: authorization.slice(7) });
    }
  });

  it('undefined is not', () => {
    expect(isExactBearer(undefined, false)).toBe(false);
  });
});
