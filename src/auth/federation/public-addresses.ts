/**
 * Which addresses a tenant's identity provider may be reached at (issue 42,
 * finding 7): the issuer and every URL it names are chosen by a tenant admin,
 * so without `sso.allowPrivateIssuers` the gateway connects only to public
 * unicast addresses — never loopback, private (RFC 1918), CGNAT (RFC 6598),
 * link-local (cloud metadata at 169.254.169.254), unique-local, multicast,
 * unspecified, reserved or documentation ranges, nor an IPv6 form of one of
 * those (IPv4-mapped, NAT64).
 *
 * Checked where the socket is made: {@link publicOnlyLookup} resolves a name,
 * refuses it when any of its addresses is not public, and hands the checked
 * addresses to the connect — so a name that answered public when the IdP was
 * set and private now (DNS rebinding) is refused at connect time.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';

/** `dns.lookup`'s shape, as `net.connect`'s `lookup` option calls it. */
export type LookupFunction = typeof dnsLookup;

/** IPv4 ranges that are not public unicast (IANA special-purpose registry, RFC 6890). */
const NOT_PUBLIC_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT (RFC 6598)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

/**
 * IPv6 is allowed, not refused: only global unicast (2000::/3) is public, less
 * the ranges of it that are not reachable unicast hosts or that hide an IPv4
 * address this check would not see (Teredo in 2001::/23, 6to4 in 2002::/16).
 */
const NOT_PUBLIC_V6: readonly [string, number][] = [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation (RFC 9637)
];

const notPublic4 = blockList(NOT_PUBLIC_V4, 'ipv4');
const notPublic6 = blockList(NOT_PUBLIC_V6, 'ipv6');
const globalUnicast6 = blockList([['2000::', 3]], 'ipv6');

function blockList(ranges: readonly [string, number][], type: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, type);
  return list;
}

/** Whether `address` (an IPv4 or IPv6 literal, without brackets) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return !notPublic4.check(address, 'ipv4');
  const hextets = ipv6Hextets(address);
  if (hextets === undefined) return false;
  const embedded = embeddedIpv4(hextets);
  if (embedded !== undefined) return isPublicAddress(embedded);
  return globalUnicast6.check(address, 'ipv6') && !notPublic6.check(address, 'ipv6');
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2)
 * or NAT64 (`64:ff9b::a.b.c.d`, RFC 6052) address: connecting to it is
 * connecting to that IPv4 address.
 */
function embeddedIpv4(h: number[]): string | undefined {
  const mapped = h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff;
  const nat64 = h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0);
  if (!mapped && !nat64) return undefined;
  const [hi = 0, lo = 0] = h.slice(6);
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 literal (dotted IPv4 tail allowed); undefined when not one. */
function ipv6Hextets(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
    text = `${text.slice(0, -dotted.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}

/** The refusal of a host that is, or resolves to, an address that is not public. */
export class PrivateAddressError extends Error {
  readonly code = 'ERR_PRIVATE_ADDRESS';
  constructor(readonly host: string) {
    super(`${host} is not a public address (sso.allowPrivateIssuers is false)`);
    this.name = 'PrivateAddressError';
  }
}

/**
 * A `lookup` for `net.connect`/`tls.connect` that resolves with `resolve`
 * (every address of the name), refuses the name when any address is not
 * public, and else answers what the caller asked (one address, or all) from
 * the checked ones: the socket connects to a checked address.
 */
export function publicOnlyLookup(resolve: LookupFunction = dnsLookup): LookupFunction {
  const lookup = (
    hostname: string,
    options: unknown,
    callback?: (...args: unknown[]) => void,
  ): void => {
    const done = (callback ?? options) as (...args: unknown[]) => void;
    const asked = (typeof options === 'object' && options !== null ? options : {}) as {
      all?: boolean;
      family?: number | string;
    };
    const family = asked.family === 'IPv4' ? 4 : asked.family === 'IPv6' ? 6 : Number(asked.family);
    const options_ = { all: true as const, ...(family === 4 || family === 6 ? { family } : {}) };
    resolve(hostname, options_, (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) return done(err);
      const list = addresses;
      if (list.length === 0 || !list.every((a) => isPublicAddress(a.address)))
        return done(new PrivateAddressError(hostname));
      if (asked.all === true) return done(null, list);
      const first = list[0] as LookupAddress;
      done(null, first.address, first.family);
    });
  };
  return lookup as unknown as LookupFunction;
}

/**
 * Resolves `hostname` (an IP literal is taken as it is) and throws
 * {@link PrivateAddressError} when any of its addresses is not public. A name
 * that does not resolve (now) passes: nothing can be fetched from it, and the
 * connect-time check governs every fetch.
 */
export async function checkPublicHost(
  hostname: string,
  resolve: LookupFunction = dnsLookup,
  timeoutMs = 5000,
): Promise<void> {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) {
    if (!isPublicAddress(bare)) throw new PrivateAddressError(hostname);
    return;
  }
  const guarded = publicOnlyLookup(resolve);
  await new Promise<void>((settle, fail) => {
    const timer = setTimeout(settle, timeoutMs);
    guarded(bare, { all: true }, (err) => {
      clearTimeout(timer);
      if (err instanceof PrivateAddressError) fail(err);
      else settle();
    });
  });
}
