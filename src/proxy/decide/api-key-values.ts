/**
 * Whether a header value carries one of the gateway's API keys (`tgk_…`,
 * `auth/clients/secrets.ts`). A key is a long-lived secret: it never reaches an
 * upstream, under any header or scheme (issue 42), so the header policy drops
 * every header whose value carries one.
 *
 * What counts as carrying a key: its key-id part — `tgk_`, 16 base32
 * characters, `_` — anywhere in the value, as sent or with its `_`
 * percent-escaped (`%5F`, a cookie or a form value): by chance, random text
 * holds that shape about once in 10^14 positions; in `Authorization`, also inside base64 credentials of any scheme
 * but `Bearer` (`Basic base64(user:tgk_…)`): a bearer credential (in any
 * spelling `auth/credentials/read-credential.ts` recognises) is the gateway's
 * to verify, and it forwards only a token it verified. The key's
 * secret and checksum need not follow: a truncated or mistyped key is still
 * mostly secret. Encodings beyond these (a key base64-encoded into a cookie,
 * encrypted, split) are not recognised.
 *
 * The proxy path pays a length test per forwarded header: a value shorter
 * than a key cannot hold one; a longer one is searched for `tgk` first.
 */
import { namesBearer } from '../../auth/credentials/read-credential.js';
import { API_KEY_LENGTH } from '../../auth/clients/secrets.js';

const KEY_ID = /tgk(?:_|%5[Ff])[a-z2-7]{16}(?:_|%5[Ff])/;
const BASE64 = /^[A-Za-z0-9+/_-]+=*$/;

/** A header value (or a header's values) with an API key in it. */
export function carriesApiKey(value: string | string[] | undefined): boolean {
  if (typeof value === 'string')
    return value.length >= API_KEY_LENGTH && value.includes('tgk') && KEY_ID.test(value);
  return value !== undefined && value.some(carriesApiKey);
}

/** An `Authorization` value with an API key in it: as sent, or base64-encoded in its credentials. */
export function authorizationCarriesApiKey(value: string | undefined): boolean {
  if (value === undefined || value.length < API_KEY_LENGTH) return false;
  if (carriesApiKey(value)) return true;
  if (namesBearer(value)) return false;
  const credentials = value.slice(value.search(/[ \t]/) + 1).trim();
  return (
    BASE64.test(credentials) && carriesApiKey(Buffer.from(credentials, 'base64').toString('latin1'))
  );
}
