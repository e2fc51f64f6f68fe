/**
 * `publicUrl`: the gateway's external origin, as clients and browsers reach
 * it. What the gateway writes into documents and links that leave it — the
 * RFC 8414 metadata's URLs, the `redirect_uri` of a browser sign-in at a
 * tenant's identity provider — comes from here, never from a request's
 * `Host`. Omitted: those are built from the request's `Host` (or a trusted
 * proxy's `X-Forwarded-Host`), accepted only when it is a valid host[:port]
 * (`api/public-origin.ts`).
 */
import { z } from 'zod';

/** `scheme://host[:port]` exactly as `URL` writes an origin (one trailing `/` allowed). */
const origin = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      const bare = value.endsWith('/') ? value.slice(0, -1) : value;
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === bare;
    } catch {
      return false;
    }
  }, 'must be an http(s) origin (https://gw.example.com, lower case, no path, query, fragment or userinfo)')
  .meta({ typeName: 'http(s) origin' });

export const publicUrl = origin
  .optional()
  .describe(
    "the gateway's external origin (`https://gw.example.com`): the URLs of `/.well-known/oauth-authorization-server` and the browser sign-in's `redirect_uri` at identity providers (and every link the gateway sends); omitted: built from the request's Host, which must then be a valid host[:port] (else 400 `invalid_request`), and the metadata is not publicly cacheable",
  )
  .meta({ examples: ['https://gw.example.com'] });
