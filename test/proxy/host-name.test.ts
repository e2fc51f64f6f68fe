/**
 * `host-name.ts` promises: `hostnameOf` reads a Host-like value the one way
 * every parser agrees on — the lower-case hostname without its port or one
 * trailing dot; `undefined` for an empty value or a bracketed IPv6 literal
 * (neither names a tenant or a route's host); and a 400 `invalid_request`
 * for anything parsers could read differently (bad or repeated ports,
 * userinfo, empty labels, escapes, lists).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { hostnameOf } from '../../src/proxy/decide/host-name.js';

/** The value is refused with 400 `invalid_request`. */
function expectRefused(value: string): void {
  let thrown: unknown;
  try {
    hostnameOf(value);
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(GatewayError);
  const error = thrown as GatewayError;
  expect(error.code).toBe('invalid_request');
  expect(error.status).toBe(400);
}

describe('hostnameOf', () => {
  it.each([
    ['example.com', 'example.com'],
    ['api.acme.example.com', 'api.acme.example.com'],
    ['localhost', 'localhost'],
    ['my-host_1.internal', 'my-host_1.internal'],
    ['127.0.0.1', '127.0.0.1'],
  ])('%s → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });

  it.each([
    ['Example.COM', 'example.com'],
    ['ACME.API.EXAMPLE.COM', 'acme.api.example.com'],
    ['LocalHost:8080', 'localhost'],
  ])('lower-cases letters: %s → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });

  it.each([
    ['example.com:8080', 'example.com'],
    ['example.com:80', 'example.com'],
    ['example.com:', 'example.com'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['localhost:0', 'localhost'],
  ])('drops a numeric (or empty) port: %s → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });

  it.each([
    ['example.com.', 'example.com'],
    ['Example.Com.:443', 'example.com'],
    ['localhost.', 'localhost'],
  ])('drops one trailing dot: %s → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });

  it.each([
    [' example.com', 'example.com'],
    ['example.com:8080  ', 'example.com'],
    ['\texample.com\t', 'example.com'],
  ])('ignores surrounding spaces and tabs: %j → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });

  it.each(['', ' ', '\t \t'])('an empty value (%j) names no host', (value) => {
    expect(hostnameOf(value)).toBeUndefined();
  });

  it.each([
    '[::1]',
    '[::1]:8080',
    '[::1]:',
    '[2001:DB8::1]',
    '[fe80::a:b:c:d]:443',
    '[::ffff:192.0.2.1]',
    ' [::1] ',
  ])('an IPv6 literal (%s) names no host', (value) => {
    expect(hostnameOf(value)).toBeUndefined();
  });

  it.each([
    ['example.com:80:80', 'two ports'],
    ['example.com:8o', 'a port that is not a number'],
    ['example.com:http', 'a named port'],
    ['example.com:-1', 'a signed port'],
    ['example.com: 80', 'a space before the port'],
    ['user@example.com', 'userinfo'],
    ['user:pw@example.com', 'userinfo with a password'],
    ['evil.com@example.com', 'userinfo that looks like a host'],
    ['a..example.com', 'an empty label'],
    ['.example.com', 'a leading dot'],
    ['example.com..', 'two trailing dots'],
    ['.', 'only a dot'],
    [':8080', 'only a port'],
    ['exa%6dple.com', 'a percent escape'],
    ['example.com%2f', 'an escaped slash'],
    ['example.com\\x', 'a backslash'],
    ['example.com/path', 'a path'],
    ['example.com?x=1', 'a query'],
    ['example.com#x', 'a fragment'],
    ['a.example.com, b.example.com', 'a list'],
    ['a.example.com,b.example.com', 'a list without spaces'],
    ['a.example.com b.example.com', 'an inner space'],
    ['exämple.com', 'a non-ASCII letter'],
    ['::1', 'an unbracketed IPv6 address'],
  ])('refuses %j (%s)', (value) => {
    expectRefused(value);
  });

  it.each([
    ['[::1', 'an unclosed bracket'],
    ['[]', 'empty brackets'],
    ['[::1]x', 'text after the bracket'],
    ['[::1]:80:80', 'two ports'],
    ['[::1]:http', 'a named port'],
    ['[fe80::1%25eth0]', 'a zone id'],
    ['[v1.future]', 'an IPvFuture literal'],
    ['[::1].example.com', 'a name after the literal'],
    ['example.com]', 'a stray bracket'],
  ])('refuses the bracketed %j (%s)', (value) => {
    expectRefused(value);
  });

  // JavaScript's trim() drops these too; the upstream still receives them.
  it.each([
    ['no-break space', '\u00a0example.com'],
    ['byte order mark', '\ufeffexample.com'],
    ['line separator', 'example.com\u2028'],
    ['vertical tab', '\vexample.com'],
    ['form feed', 'example.com\f'],
  ])('a host wrapped in %s is refused, not read as example.com', (_what, value) => {
    expectRefused(value);
  });

  it('property: letter case, one trailing dot and a port never change the name', () => {
    const label = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(label, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.option(fc.integer({ min: 0, max: 65_535 }), { nil: undefined }),
        (labels, trailingDot, port) => {
          const name = labels.join('.');
          const value = `${name}${trailingDot ? '.' : ''}${port === undefined ? '' : `:${port}`}`;
          expect(hostnameOf(value)).toBe(name.toLowerCase());
          expect(hostnameOf(value.toUpperCase())).toBe(name.toLowerCase());
        },
      ),
    );
  });
});
