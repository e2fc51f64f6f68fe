/**
 * Where a company sign-in returns the browser (`api/identity/sso-return-to.ts`,
 * issue 44): a path on the gateway, else `/` — never another host, in any of
 * the spellings browsers read as one.
 */
import { describe, expect, it } from 'vitest';
import { ssoReturnTo } from '../../src/api/identity/sso-return-to.js';

describe('the return path of a company sign-in', () => {
  it('keeps a path with its query and fragment', () => {
    for (const path of ['/', '/orders', '/orders/7?x=1&y=%2F%2F', '/a#b', '/%5Cevil'])
      expect(ssoReturnTo(path), path).toBe(path);
  });

  it('turns anything that could leave the host into /', () => {
    for (const bad of [
      undefined,
      '',
      'orders',
      '//evil.example',
      '//evil.example/x',
      '/\\evil.example',
      '/\\/evil.example',
      '/a\\b',
      'https://evil.example/',
      'javascript:alert(1)',
      '/\t/evil.example',
      '/\n/evil.example',
      '/ /evil.example',
      '/\u0000',
      '/\u007f',
      `/${'a'.repeat(2048)}`,
    ])
      expect(ssoReturnTo(bad), JSON.stringify(bad)).toBe('/');
  });
});
