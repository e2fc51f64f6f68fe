/**
 * Which addresses a tenant's IdP may be reached at (issue 42, finding 7;
 * `auth/federation/public-addresses.ts`): the classification of every form of
 * a non-public address, and the lookup the fetcher's sockets use — it refuses
 * a name when any of its addresses is not public, and hands over only the
 * addresses it checked.
 */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkPublicHost,
  isPublicAddress,
  PrivateAddressError,
  publicOnlyLookup,
  type LookupFunction,
} from '../../src/auth/federation/public-addresses.js';

const NOT_PUBLIC = [
  '127.0.0.1',
  '127.255.255.254',
  '10.1.2.3',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254', // cloud metadata
  '100.64.0.1', // CGNAT
  '0.0.0.0',
  '192.0.2.1',
  '198.18.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fe80::1',
  'fe80::1%eth0',
  'fc00::1',
  'fd12:3456::1',
  'ff02::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::127.0.0.1',
  '64:ff9b::a00:1', // NAT64 of 10.0.0.1
  '2002:a00:1::1', // 6to4
  '2001::1', // Teredo
  '2001:db8::1',
];

const PUBLIC = [
  '8.8.8.8',
  '93.184.216.34',
  '172.32.0.1',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2606:4700:4700::1111',
  '2a00:1450:4001:82a::200e',
];

/** A resolver answering `answers` for every name. */
function resolverOf(answers: LookupAddress[]): LookupFunction {
  return ((_name: string, _options: unknown, callback: (...args: unknown[]) => void) =>
    callback(null, answers)) as unknown as LookupFunction;
}

function lookupWith(
  resolve: LookupFunction,
  options: object,
): Promise<{ err: unknown; address: unknown; family: unknown }> {
  return new Promise((settle) =>
    (publicOnlyLookup(resolve) as unknown as (...args: unknown[]) => void)(
      'idp.example',
      options,
      (err: unknown, address: unknown, family: unknown) => settle({ err, address, family }),
    ),
  );
}

describe('isPublicAddress', () => {
  it.each(NOT_PUBLIC)('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC)('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('a name is no address', () => {
    expect(isPublicAddress('localhost')).toBe(false);
  });
});

describe('publicOnlyLookup', () => {
  it('refuses a name when any of its addresses is not public', async () => {
    const mixed = resolverOf([
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ]);
    const { err } = await lookupWith(mixed, { all: true });
    expect(err).toBeInstanceOf(PrivateAddressError);
    expect(await lookupWith(resolverOf([]), {})).toMatchObject({ err: expect.any(Error) });
  });

  it('answers one checked address, or all of them, as asked', async () => {
    const answers = [
      { address: '2606:4700:4700::1111', family: 6 },
      { address: '93.184.216.34', family: 4 },
    ];
    expect(await lookupWith(resolverOf(answers), {})).toEqual({
      err: null,
      address: '2606:4700:4700::1111',
      family: 6,
    });
    const all = await lookupWith(resolverOf(answers), { all: true });
    expect(all).toMatchObject({ err: null, address: answers });
  });
});

describe('checkPublicHost', () => {
  it('takes an IP literal as it is, bracketed or not, and resolves a name', async () => {
    await expect(checkPublicHost('[::1]')).rejects.toBeInstanceOf(PrivateAddressError);
    await expect(checkPublicHost('127.0.0.1')).rejects.toBeInstanceOf(PrivateAddressError);
    await expect(checkPublicHost('8.8.8.8')).resolves.toBeUndefined();
    const loopback = resolverOf([{ address: '127.0.0.1', family: 4 }]);
    await expect(checkPublicHost('idp.example', loopback)).rejects.toBeInstanceOf(
      PrivateAddressError,
    );
  });

  it('lets a name that does not resolve pass (the connect-time check governs)', async () => {
    const nowhere = ((_n: string, _o: unknown, callback: (...args: unknown[]) => void) =>
      callback(
        Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }),
      )) as unknown as LookupFunction;
    await expect(checkPublicHost('idp.example', nowhere)).resolves.toBeUndefined();
  });
});
