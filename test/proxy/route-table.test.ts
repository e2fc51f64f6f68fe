import { describe, expect, it } from 'vitest';
import { createRouteTable } from '../../src/proxy/decide/route-table.js';

describe('route table', () => {
  const table = createRouteTable([
    { prefix: '/orders', name: 'orders' },
    { prefix: '/orders/archive/', name: 'archive' },
    { prefix: '/', name: 'root' },
    { prefix: '/users', name: 'users' },
  ]);
  const name = (path: string) => table.match(path)?.name;

  it.each([
    ['/orders', 'orders'],
    ['/orders/', 'orders'],
    ['/orders/1', 'orders'],
    ['/orders/archive', 'archive'],
    ['/orders/archive/2020', 'archive'],
    ['/ordersx', 'root'],
    ['/users/1', 'users'],
    ['/', 'root'],
  ])('%s → %s (longest prefix, on segment boundaries)', (path, expected) => {
    expect(name(path)).toBe(expected);
  });

  it('matches nothing without a catch-all', () => {
    const narrow = createRouteTable([{ prefix: '/orders' }]);
    expect(narrow.match('/ordersx')).toBeUndefined();
    expect(narrow.match('/')).toBeUndefined();
    expect(narrow.match('/orders/1')).toEqual({ prefix: '/orders' });
  });
});
