import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEmail } from '../../src/auth/accounts.js';
import { parseBasicAuthorization } from '../../src/auth/credentials/basic.js';
import {
  checkPasswordPolicy,
  PASSWORD_MAX_BYTES,
  PASSWORD_MIN_BYTES,
} from '../../src/auth/passwords/passwords.js';
import { GatewayError } from '../../src/errors.js';

const encode = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const basic = (userPass: string): string => `Basic ${encode(userPass)}`;

/** The header is refused with 401 `invalid_credentials`; returns the description. */
function refusal(header: string | undefined): string {
  let thrown: unknown;
  try {
    parseBasicAuthorization(header);
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(GatewayError);
  const error = thrown as GatewayError;
  expect(error.code).toBe('invalid_credentials');
  expect(error.status).toBe(401);
  return error.message;
}

describe('accepted credentials', () => {
  it('splits user and password', () => {
    expect(parseBasicAuthorization(basic('alice@example.com:alice-password-1'))).toEqual({
      id: 'alice@example.com',
      secret: 'alice-password-1',
    });
  });

  it.each(['Basic', 'basic', 'BASIC', 'bAsIc'])('scheme %s (case-insensitive, RFC 7235)', (s) => {
    const header = `${s} ${encode('bob@example.com:pw-12345')}`;
    expect(parseBasicAuthorization(header)).toEqual({
      id: 'bob@example.com',
      secret: 'pw-12345',
    });
  });

  it('extra spaces around the credentials', () => {
    const header = `Basic   ${encode('bob@example.com:pw-12345')}  `;
    expect(parseBasicAuthorization(header).secret).toBe('pw-12345');
  });

  it('a UTF-8 password (RFC 7617 charset)', () => {
    expect(parseBasicAuthorization(basic('zoë@example.com:pässwörd-日本-🔑'))).toEqual({
      id: 'zoë@example.com',
      secret: 'pässwörd-日本-🔑',
    });
  });

  it('colons in the password: only the first colon separates', () => {
    expect(parseBasicAuthorization(basic('carol@example.com:a:b::c:'))).toEqual({
      id: 'carol@example.com',
      secret: 'a:b::c:',
    });
  });

  it('an empty password is parsed (the login then fails like any wrong password)', () => {
    expect(parseBasicAuthorization(basic('dave@example.com:'))).toEqual({
      id: 'dave@example.com',
      secret: '',
    });
  });

  it('spaces inside the password are kept', () => {
    expect(parseBasicAuthorization(basic('erin@example.com: two words ')).secret).toBe(
      ' two words ',
    );
  });
});

describe('refused with invalid_credentials', () => {
  it.each([
    ['no header', undefined],
    ['an empty header', ''],
  ])('%s', (_name, header) => {
    expect(refusal(header)).toBe('Basic credentials are required.');
  });

  it.each([
    ['Bearer', `Bearer ${encode('a@b.c:pw')}`],
    ['Digest', 'Digest username="a", realm="r"'],
    ['no space after the scheme', `Basic${encode('a@b.c:pw')}`],
    ['the scheme alone', 'Basic'],
    ['the scheme and a space', 'Basic '],
    ['two tokens', `Basic ${encode('a@b.c:pw')} ${encode('x:y')}`],
    ['a tab instead of a space', `Basic\t${encode('a@b.c:pw')}`],
    ['a prefix before the scheme', `xBasic ${encode('a@b.c:pw')}`],
  ])('wrong scheme or shape: %s', (_name, header) => {
    expect(refusal(header)).toBe('The Authorization header is not Basic credentials.');
  });

  it.each([
    ['characters outside base64', 'Basic !!!!'],
    ['missing padding', `Basic ${encode('alice@example.com:pw').replace(/=+$/, '')}`],
    ['base64url alphabet', `Basic ${Buffer.from('a@b.c:??>>~~', 'utf8').toString('base64url')}`],
    ['a length that is not a multiple of 4', 'Basic YWJjZA'],
    ['padding in the middle', 'Basic YQ==YWJj'],
  ])('bad base64: %s', (_name, header) => {
    expect(refusal(header)).toBe('The Basic credentials are not valid base64.');
  });

  it('bytes that are not UTF-8', () => {
    const header = `Basic ${Buffer.from([0x61, 0xff, 0x3a, 0x70, 0x77]).toString('base64')}`;
    expect(refusal(header)).toBe('The Basic credentials are not valid UTF-8.');
  });

  it('no colon between user and password', () => {
    expect(refusal(basic('alice@example.com'))).toBe(
      'The Basic credentials have no colon between user and password.',
    );
  });

  it.each([
    ['empty', ':alice-password-1'],
    ['only spaces', '   :alice-password-1'],
    ['nothing at all', ':'],
  ])('empty user: %s', (_name, userPass) => {
    expect(refusal(basic(userPass))).toBe('The Basic credentials name no user.');
  });

  it.each([
    ['NUL in the user', 'ali\u0000ce@example.com:pw-12345'],
    ['a newline ending the password', 'alice@example.com:pw-12345\n'],
    ['CR LF in the password', 'alice@example.com:pw\r\nX-Evil: 1'],
    ['a tab in the password', 'alice@example.com:pw\t12345'],
    ['DEL in the password', 'alice@example.com:pw\u007f12345'],
    ['ESC in the user', '\u001b[31malice@example.com:pw-12345'],
  ])('control characters: %s', (_name, userPass) => {
    expect(refusal(basic(userPass))).toBe('The Basic credentials contain control characters.');
  });

  it('never repeats the password in the description', () => {
    const secret = 'Sup3r-secret-value';
    for (const header of [
      basic(`:${secret}`),
      basic(`a@b.c:${secret}\n`),
      `Bearer ${secret}`,
      `Basic ${secret}`,
    ]) {
      expect(refusal(header)).not.toContain(secret);
    }
  });
});

describe('what signup accepts, Basic carries back', () => {
  /** Mostly any code point; often a control character or a lone surrogate. */
  const unit = fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)) },
    { weight: 1, arbitrary: fc.constantFrom('\u007f', ':', ' ', '\u0085', '\u2028') },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    },
  );
  const accepts = (check: () => unknown): boolean => {
    try {
      check();
      return true;
    } catch (err) {
      expect((err as GatewayError).code).toBe('invalid_request');
      return false;
    }
  };
  const roundTrip = (userPass: string) => {
    try {
      return parseBasicAuthorization(basic(userPass));
    } catch {
      return undefined;
    }
  };

  it('a password is accepted exactly when it has the right length and comes back unchanged (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit, minLength: 4, maxLength: 40 }), (password) => {
        const back = roundTrip(`alice@example.com:${password}`);
        const carried = back?.secret === password;
        const bytes = Buffer.byteLength(password, 'utf8');
        const lengthOk = bytes >= PASSWORD_MIN_BYTES && bytes <= PASSWORD_MAX_BYTES;
        expect(accepts(() => checkPasswordPolicy(password))).toBe(carried && lengthOk);
      }),
      { numRuns: 2000 },
    );
  });

  it('an e-mail signup accepts comes back as the same user (property)', () => {
    const email = fc
      .tuple(
        fc.stringMatching(/^ ?[A-Za-z0-9][A-Za-z0-9._+-]{0,8}@[a-z]{1,8}\.[A-Za-z]{2,4} ?$/),
        fc.oneof(fc.constant(''), fc.string({ unit, maxLength: 2 })),
        fc.nat(),
      )
      .map(([address, extra, at]) => {
        const i = at % (address.length + 1);
        return address.slice(0, i) + extra + address.slice(i);
      });
    let acceptedRuns = 0;
    fc.assert(
      fc.property(email, (raw) => {
        let normalised = '';
        if (!accepts(() => (normalised = checkEmail(raw)))) return;
        acceptedRuns++;
        expect(roundTrip(`${normalised}:pw-12345`)?.id).toBe(normalised);
      }),
      { numRuns: 1000 },
    );
    expect(acceptedRuns).toBeGreaterThan(100);
  });

  it.each([
    ['a colon', 'a:b@example.com'],
    ['a control character', 'ab\u0001@example.com'],
    ['DEL', 'ab\u007f@example.com'],
  ])('an e-mail with %s is refused', (_name, email) => {
    expect(accepts(() => checkEmail(email))).toBe(false);
  });

  it.each([
    ['a colon', true, 'pass:word:1'],
    ['spaces', true, ' pass word 1 '],
    ['a tab', false, 'pass\tword-1'],
    ['ESC', false, 'pass\u001bword-1'],
    ['a lone surrogate', false, 'password-\udc00'],
    ['a surrogate pair (emoji)', true, 'password-🔑'],
  ])('a password with %s: accepted %s', (_name, ok, password) => {
    expect(accepts(() => checkPasswordPolicy(password))).toBe(ok);
  });
});
