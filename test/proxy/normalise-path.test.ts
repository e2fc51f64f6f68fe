import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { normaliseTarget } from '../../src/proxy/decide/normalise-path.js';

const path = (url: string) => normaliseTarget(url).path;
const refusal = (url: string) => {
  try {
    normaliseTarget(url);
  } catch (err) {
    return (err as GatewayError).code;
  }
  return 'accepted';
};

describe('normaliseTarget', () => {
  it.each([
    ['/orders/1', '/orders/1'],
    ['/orders/1/', '/orders/1/'],
    ['/', '/'],
    ['//orders///1', '/orders/1'],
    ['/orders/./1', '/orders/1'],
    ['/orders/x/../1', '/orders/1'],
    ['/orders/%2e%2e/admin', '/admin'],
    ['/orders/%2E%2e/admin', '/admin'],
    ['/orders/.%2e/admin', '/admin'],
    ['/../../etc/passwd', '/etc/passwd'],
    ['/%6frders/1', '/orders/1'],
    ['/orders/%7e', '/orders/~'],
    ['/orders/a%20b', '/orders/a%20b'],
    ['/orders/%c3%a9', '/orders/%C3%A9'],
    ['/orders/..', '/'],
    ['/orders/x/..', '/orders/'],
    // A tab is whitespace like %20: kept as sent (aws/http-desync-guardian: "%09 in URI is OK").
    ['/path-%09-uri', '/path-%09-uri'],
    ['/orders/a%09b', '/orders/a%09b'],
  ])('%s → %s', (input, expected) => {
    expect(path(input)).toBe(expected);
  });

  it('keeps the query apart and untouched', () => {
    expect(normaliseTarget('/a/../b?x=%2f&y=..')).toEqual({ path: '/b', query: 'x=%2f&y=..' });
  });

  it.each([
    '/orders%2f..%2fadmin',
    '/orders/a%2Fb',
    '/orders/a%5cb',
    '/orders\\..\\admin',
    '/orders/%00',
    '/orders/%0a',
    '/orders/%0D',
    '/orders/%0d%0aHost:%20evil',
    '/orders/%01',
    '/orders/%0B',
    '/orders/%1f',
    '/orders/%7F',
    '/orders/..%09/admin',
    '/orders/%09../admin',
    '/orders/%zz',
    '/orders/%',
    'orders/1',
    'http://evil.example/orders',
    // Raw bytes outside ASCII (HTTP/2's :path, forward-auth's X-Original-URI): an overlong
    // UTF-8 "." (C0 AE) that old decoders read as a dot, a full-width solidus NFKC makes "/".
    '/orders/acme/\u00c0\u00ae\u00c0\u00ae/globex',
    '/orders/acme\uff0f..\uff0fglobex',
    '/orders/caf\u00e9',
  ])('refuses %s with invalid_request', (input) => {
    expect(refusal(input)).toBe('invalid_request');
  });

  it('property: the result is canonical — no dot segments, no empty segments, idempotent', () => {
    const segment = fc.oneof(
      fc.constantFrom(
        '.',
        '..',
        '',
        '%2e',
        '%2E%2e',
        '.%2e',
        'orders',
        'tenants',
        'acme',
        '%61cme',
        'x%20y',
      ),
      fc.stringMatching(/^[A-Za-z0-9._~-]{1,6}$/),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 10 }), (segments) => {
        const out = path(`/${segments.join('/')}`);
        const parts = out.split('/').slice(1, out.endsWith('/') ? -1 : undefined);
        expect(out.startsWith('/')).toBe(true);
        for (const p of parts) {
          if (out !== '/') expect(p).not.toBe('');
          expect(['.', '..']).not.toContain(p);
          expect(p.toLowerCase()).not.toContain('%2e');
        }
        expect(path(out)).toBe(out);
      }),
    );
  });

  it('property: a path can never climb out of a prefix it does not name after normalising', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('..', '%2e%2e', '.', 'x', ''), { maxLength: 8 }),
        (segments) => {
          const out = path(`/public/${segments.join('/')}/admin`);
          // Either it stays under /public, or it lost /public entirely: it can never be /public-looking
          // while pointing elsewhere.
          expect(out === '/admin' || out.startsWith('/public/') || out.startsWith('/x/')).toBe(
            true,
          );
        },
      ),
    );
  });
});
