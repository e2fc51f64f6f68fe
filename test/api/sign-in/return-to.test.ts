/**
 * `return_to` (`src/api/sign-in/return-to.ts`): the one rule for where a
 * browser goes after signing in or out. Every trick known to turn a "local
 * path" into another host ends at `/`; paths and the configured hosts pass.
 */
import { describe, expect, it } from 'vitest';
import { safeReturnTo } from '../../../src/api/sign-in/return-to.js';

const rule = {
  cookie: { secure: true },
  returnHosts: ['app.example.com', 'Admin.Example.com:8443'],
};
const plain = { ...rule, cookie: { secure: false } };

describe('return_to', () => {
  it('keeps a path on this host, query and fragment included', () => {
    for (const path of ['/', '/orders', '/orders/42?tab=items&x=%2F', '/a/b#top', '/caf%C3%A9'])
      expect(safeReturnTo(path, rule), path).toBe(path);
  });

  it.each([
    ['//evil.example/x'],
    ['///evil.example'],
    ['/\\evil.example'],
    ['/%2F%2Fevil.example'],
    ['/%2f/evil.example'],
    ['/%5Cevil.example'],
    ['/%5cevil.example'],
    ['/%252F%252Fevil.example'],
    ['\\\\evil.example'],
    ['\t//evil.example'],
    ['/\t/evil.example'],
    [' /x'],
    ['/x y'],
    ['/x%0d%0aSet-Cookie:%20a=b'],
    ['/x\r\nSet-Cookie: a=b'],
    ['/x%00'],
    ['/%E0%A4%A'],
    ['https://evil.example/'],
    ['https://app.example.com@evil.example/'],
    ['https://app.example.com:@evil.example/'],
    ['https://user:pw@app.example.com/'],
    ['https://evil.example#@app.example.com'],
    ['https://evil.example\\@app.example.com'],
    ['https:evil.example'],
    ['https:/app.example.com/'],
    ['https:\\\\app.example.com/'],
    ['javascript:alert(1)'],
    ['JaVaScRiPt:alert(1)'],
    ['data:text/html,<script>alert(1)</script>'],
    ['http://app.example.com/'],
    ['https://app.example.com:8443/'],
    ['https://admin.example.com/'],
    ['https://app.example.com.evil.example/'],
    ['https://evil.example/app.example.com'],
    ['ftp://app.example.com/'],
    ['orders'],
    ['./orders'],
    [`/${'a'.repeat(2048)}`],
    ['/\u2028/evil.example'],
    ['/\u00a0x'],
  ])('%j ends at /', (raw) => {
    expect(safeReturnTo(raw, rule)).toBe('/');
  });

  it('keeps an https URL of a returnHosts host, in any case, default port or the one configured', () => {
    expect(safeReturnTo('https://app.example.com/x?y=1', rule)).toBe(
      'https://app.example.com/x?y=1',
    );
    expect(safeReturnTo('HTTPS://APP.example.com/x', rule)).toBe('https://app.example.com/x');
    expect(safeReturnTo('https://app.example.com:443/', rule)).toBe('https://app.example.com/');
    expect(safeReturnTo('https://admin.example.com:8443/a', rule)).toBe(
      'https://admin.example.com:8443/a',
    );
  });

  it('admits http: only when the cookie is not Secure (a trial over plain HTTP)', () => {
    expect(safeReturnTo('http://app.example.com/x', rule)).toBe('/');
    expect(safeReturnTo('http://app.example.com/x', plain)).toBe('http://app.example.com/x');
    expect(safeReturnTo('http://app.example.com:80/x', plain)).toBe('http://app.example.com/x');
    expect(safeReturnTo('http://app.example.com:8080/x', plain)).toBe('/');
  });

  it('treats nothing, empty and no hosts as /', () => {
    expect(safeReturnTo(undefined, rule)).toBe('/');
    expect(safeReturnTo('', rule)).toBe('/');
    expect(safeReturnTo('https://app.example.com/', { ...rule, returnHosts: [] })).toBe('/');
  });
});
