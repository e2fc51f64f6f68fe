/**
 * `trusted-proxies.ts` promises: a peer is trusted only when its address lies
 * in a configured IP address or CIDR block (IPv4, IPv6, and IPv4 clients seen
 * as `::ffff:a.b.c.d` on a dual-stack socket); nothing configured trusts
 * nobody. The client address is the peer's own unless the peer is trusted,
 * and then the nearest `X-Forwarded-For` hop, walking from the right, that is
 * not itself trusted — never an entry the client wrote further left.
 */
import { describe, expect, it } from 'vitest';
import { clientAddress, createTrustCheck } from '../../src/proxy/decide/trusted-proxies.js';

describe('createTrustCheck', () => {
  it('with nothing configured trusts no one, loopback included', () => {
    const trusted = createTrustCheck([]);
    for (const peer of ['127.0.0.1', '::1', '10.0.0.1', '::ffff:127.0.0.1', undefined]) {
      expect(trusted(peer)).toBe(false);
    }
  });

  it('never trusts an unknown peer', () => {
    expect(createTrustCheck(['0.0.0.0/0'])(undefined)).toBe(false);
  });

  it.each([
    ['10.0.0.0', true],
    ['10.1.2.3', true],
    ['10.255.255.255', true],
    ['9.255.255.255', false],
    ['11.0.0.0', false],
    ['192.168.1.0', true],
    ['192.168.1.255', true],
    ['192.168.0.255', false],
    ['192.168.2.0', false],
    ['172.16.0.7', true],
    ['172.16.0.8', false],
    ['172.16.0.6', false],
  ])('IPv4 blocks and single addresses: %s → %s', (peer, expected) => {
    const trusted = createTrustCheck(['10.0.0.0/8', '192.168.1.0/24', '172.16.0.7']);
    expect(trusted(peer)).toBe(expected);
  });

  it('a /32 is exactly one address', () => {
    const trusted = createTrustCheck(['203.0.113.9/32']);
    expect(trusted('203.0.113.9')).toBe(true);
    expect(trusted('203.0.113.8')).toBe(false);
    expect(trusted('203.0.113.10')).toBe(false);
  });

  it.each([
    ['fd00::1', true],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    ['fc00::1', false],
    ['fe80::1', false],
    ['2001:db8::1', true],
    ['2001:DB8:0:0:0:0:0:1', true],
    ['2001:db8:ffff::1', true],
    ['2001:db9::1', false],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::2', false],
  ])('IPv6 blocks and single addresses, in any spelling: %s → %s', (peer, expected) => {
    const trusted = createTrustCheck(['fd00::/8', '2001:db8::/32', '::1']);
    expect(trusted(peer)).toBe(expected);
  });

  it.each([
    ['::ffff:10.1.2.3', true],
    ['::ffff:11.0.0.1', false],
    ['::ffff:192.0.2.1', true],
    ['::ffff:192.0.2.2', false],
  ])('reads an IPv4-mapped IPv6 peer as its IPv4 address: %s → %s', (peer, expected) => {
    const trusted = createTrustCheck(['10.0.0.0/8', '192.0.2.1']);
    expect(trusted(peer)).toBe(expected);
  });

  it('does not let an IPv4 block trust unrelated IPv6 peers, or the reverse', () => {
    const v4 = createTrustCheck(['10.0.0.0/8']);
    expect(v4('2001:db8::1')).toBe(false);
    expect(v4('::1')).toBe(false);
    const v6 = createTrustCheck(['fd00::/8']);
    expect(v6('10.0.0.1')).toBe(false);
    expect(v6('253.0.0.1')).toBe(false);
  });

  it.each([
    'garbage',
    '',
    'unknown',
    '10.0.0.1:8080',
    '[10.0.0.1]',
    '[::1]',
    '10.0.0.256',
    ' 10.0.0.1',
  ])('answers false, without throwing, for a malformed address %j', (peer) => {
    const trusted = createTrustCheck(['10.0.0.0/8', '::1']);
    expect(trusted(peer)).toBe(false);
  });
});

describe('clientAddress', () => {
  const trusted = createTrustCheck(['10.0.0.0/8', 'fd00::/8']);

  it('an untrusted peer is the client, whatever its X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.5', '198.51.100.1', trusted)).toBe('203.0.113.5');
    expect(clientAddress('203.0.113.5', '10.0.0.1', trusted)).toBe('203.0.113.5');
  });

  it('with nothing trusted the peer is always the client', () => {
    expect(clientAddress('10.0.0.1', '198.51.100.1', createTrustCheck([]))).toBe('10.0.0.1');
  });

  it("an unknown peer is 'unknown', its X-Forwarded-For ignored", () => {
    expect(clientAddress(undefined, '198.51.100.1', trusted)).toBe('unknown');
    expect(clientAddress(undefined, undefined, trusted)).toBe('unknown');
  });

  it('a trusted peer without X-Forwarded-For is the client', () => {
    expect(clientAddress('10.0.0.1', undefined, trusted)).toBe('10.0.0.1');
  });

  it.each(['', ' ', ',', ' , ,', []])(
    'a trusted peer with an X-Forwarded-For of no entries (%j) is the client',
    (forwardedFor) => {
      expect(clientAddress('10.0.0.1', forwardedFor, trusted)).toBe('10.0.0.1');
    },
  );

  it('a trusted peer passes on the hop it saw: the rightmost entry', () => {
    expect(clientAddress('10.0.0.1', '198.51.100.1', trusted)).toBe('198.51.100.1');
  });

  it('takes the rightmost untrusted hop, not the leftmost one the client could have written', () => {
    expect(clientAddress('10.0.0.1', '192.0.2.66, 198.51.100.1', trusted)).toBe('198.51.100.1');
  });

  it('walks from the right over trusted hops, IPv4 and IPv6', () => {
    expect(clientAddress('10.0.0.1', '192.0.2.66, 198.51.100.1, fd00::7, 10.2.3.4', trusted)).toBe(
      '198.51.100.1',
    );
  });

  it('a trusted-looking address written by an untrusted client is not walked past', () => {
    // 198.51.100.1 sent "X-Forwarded-For: 10.9.9.9, 192.0.2.66" to our proxy, which appended it.
    expect(clientAddress('10.0.0.1', '10.9.9.9, 192.0.2.66, 198.51.100.1', trusted)).toBe(
      '198.51.100.1',
    );
  });

  it('when every hop is trusted, the leftmost one is the client', () => {
    expect(clientAddress('10.0.0.1', '10.0.0.3, 10.0.0.2', trusted)).toBe('10.0.0.3');
  });

  it('reads repeated header lines in order, as one list', () => {
    expect(clientAddress('10.0.0.1', ['192.0.2.66', '198.51.100.1, 10.0.0.2'], trusted)).toBe(
      '198.51.100.1',
    );
    expect(clientAddress('10.0.0.1', ['198.51.100.1, 10.0.0.2', '10.0.0.3'], trusted)).toBe(
      '198.51.100.1',
    );
  });

  it('trims entries and skips empty ones', () => {
    expect(clientAddress('10.0.0.1', ' 198.51.100.1 ,, 10.0.0.2 , ', trusted)).toBe('198.51.100.1');
  });

  it.each([
    ['192.0.2.66, garbage, 10.0.0.2', 'garbage'],
    ['192.0.2.66, 198.51.100.1:5678', '198.51.100.1:5678'],
    ['192.0.2.66, [fd00::1]:443', '[fd00::1]:443'],
    ['192.0.2.66, unknown', 'unknown'],
  ])(
    'stops at a malformed hop and reports it as it is, never reaching further left: %j',
    (forwardedFor, expected) => {
      expect(clientAddress('10.0.0.1', forwardedFor, trusted)).toBe(expected);
    },
  );

  it('believes a trusted peer seen as an IPv4-mapped IPv6 address', () => {
    expect(clientAddress('::ffff:10.0.0.1', '198.51.100.1', trusted)).toBe('198.51.100.1');
    expect(clientAddress('::ffff:203.0.113.5', '198.51.100.1', trusted)).toBe('::ffff:203.0.113.5');
  });

  it('walks over an IPv4-mapped trusted hop', () => {
    expect(clientAddress('10.0.0.1', '198.51.100.1, ::ffff:10.0.0.2', trusted)).toBe(
      '198.51.100.1',
    );
  });
});
