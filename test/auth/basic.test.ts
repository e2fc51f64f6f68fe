import { describe, expect, it } from 'vitest';
import { parseBasicAuthorization } from '../../src/auth/basic.js';
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
      email: 'alice@example.com',
      password: 'alice-password-1',
    });
  });

  it.each(['Basic', 'basic', 'BASIC', 'bAsIc'])('scheme %s (case-insensitive, RFC 7235)', (s) => {
    const header = `${s} ${encode('bob@example.com:pw-12345')}`;
    expect(parseBasicAuthorization(header)).toEqual({
      email: 'bob@example.com',
      password: 'pw-12345',
    });
  });

  it('extra spaces around the credentials', () => {
    const header = `Basic   ${encode('bob@example.com:pw-12345')}  `;
    expect(parseBasicAuthorization(header).password).toBe('pw-12345');
  });

  it('a UTF-8 password (RFC 7617 charset)', () => {
    expect(parseBasicAuthorization(basic('zoë@example.com:pässwörd-日本-🔑'))).toEqual({
      email: 'zoë@example.com',
      password: 'pässwörd-日本-🔑',
    });
  });

  it('colons in the password: only the first colon separates', () => {
    expect(parseBasicAuthorization(basic('carol@example.com:a:b::c:'))).toEqual({
      email: 'carol@example.com',
      password: 'a:b::c:',
    });
  });

  it('an empty password is parsed (the login then fails like any wrong password)', () => {
    expect(parseBasicAuthorization(basic('dave@example.com:'))).toEqual({
      email: 'dave@example.com',
      password: '',
    });
  });

  it('spaces inside the password are kept', () => {
    expect(parseBasicAuthorization(basic('erin@example.com: two words ')).password).toBe(
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
