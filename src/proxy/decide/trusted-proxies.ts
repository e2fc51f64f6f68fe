/** Which peers' `X-Forwarded-*` headers are believed (config `trustedProxies`). */
import { BlockList, isIPv4 } from 'node:net';

export type TrustCheck = (peer: string | undefined) => boolean;

export function createTrustCheck(cidrs: readonly string[]): TrustCheck {
  if (cidrs.length === 0) return () => false;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, bits] = cidr.split('/') as [string, string | undefined];
    const family = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (peer) => {
    if (peer === undefined) return false;
    // An IPv4 client on a dual-stack socket shows up as ::ffff:a.b.c.d.
    const plain = peer.startsWith('::ffff:') && isIPv4(peer.slice(7)) ? peer.slice(7) : peer;
    return list.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
  };
}

/**
 * The client's address: the peer, or — when the peer is a trusted proxy —
 * the nearest address in `X-Forwarded-For` that is not itself trusted
 * (walking right to left, as each proxy appends what it saw).
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustCheck,
): string {
  let client = peer ?? 'unknown';
  if (!trusted(peer) || forwardedFor === undefined) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) {
    client = hops[i] as string;
    if (!trusted(client)) break;
  }
  return client;
}
