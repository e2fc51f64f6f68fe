/**
 * The TXT records of a DNS name, asked of `sso.dnsServers` (or the system's
 * resolvers): how a tenant proves it holds an e-mail domain
 * (`tenant-domains.ts`, issue 42). A name with no TXT record (NXDOMAIN,
 * NODATA) has none; a resolver that cannot be asked is `unavailable` (503),
 * never "not found".
 */
import { Resolver } from 'node:dns/promises';
import { GatewayError } from '../../errors.js';

/** Each TXT record of `name`, its strings joined (RFC 7208 §3.3); [] when it has none. */
export type TxtLookup = (name: string) => Promise<string[]>;

export interface TxtLookupOptions {
  /** `sso.dnsServers`; undefined: the system's. */
  servers?: readonly string[] | undefined;
  /** How long one query may take. */
  timeoutMs: number;
}

/** DNS answers meaning "no such record": the name is absent or has no TXT. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);

export function createTxtLookup(options: TxtLookupOptions): TxtLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: 2 });
  if (options.servers !== undefined) resolver.setServers([...options.servers]);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      if (ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) return [];
      throw new GatewayError('unavailable', 'The DNS could not be asked; try again later.', {
        detail: 'dns_unavailable',
        cause: err,
      });
    }
  };
}
