/**
 * Refresh tokens (pure: no store, no clock).
 *
 * `tgr_<26 family characters>_<43 secret characters>_<6 checksum characters>`:
 * the family's id (128 random bits, base32), a 256-bit secret (base64url) and
 * the CRC-32 of everything before it in base62, like an API key
 * (`secrets.ts`): the family is found without a scan, secret scanners
 * recognise the token, and a mistyped one is refused before any lookup. The
 * store keeps only the SHA-256 of a whole token.
 *
 * A rotation's successor is not random: its secret is HMAC-SHA256 keyed by the
 * family's successor key — 32 random bytes the store makes with the family and
 * keeps in its record, never in a token, an answer or a log — over the
 * presented token. The same presented token always yields the same successor,
 * so two refreshes racing within the grace answer one successor between them,
 * never two live ones (RFC 9700 §4.14.2 leaves the rule to the server;
 * docs/identity-api.md#refresh-tokens). Knowing every token of a family says
 * nothing of the next one without the key (issue 42: keyed by the presented
 * token's own secret, a past token computed the whole chain onwards).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { base32, checksum, secretDigest } from '../clients/secrets.js';

export const REFRESH_TOKEN_PREFIX = 'tgr_';

const FAMILY_CHARS = 26;
const SECRET_CHARS = 43;
const CHECKSUM_CHARS = 6;
const TOKEN_LENGTH =
  REFRESH_TOKEN_PREFIX.length + FAMILY_CHARS + 1 + SECRET_CHARS + 1 + CHECKSUM_CHARS;
const REFRESH_TOKEN = /^tgr_([a-z2-7]{26})_([A-Za-z0-9_-]{43})_([0-9A-Za-z]{6})$/;

/** A well-formed refresh token, taken apart. */
export interface ParsedRefreshToken {
  familyId: string;
  secret: string;
  token: string;
}

/** A new family id (128 random bits) and the first refresh token of the family. */
export function newRefreshFamily(): { familyId: string; token: string } {
  const familyId = base32(randomBytes(16)).slice(0, FAMILY_CHARS);
  return { familyId, token: tokenOf(familyId, randomBytes(32).toString('base64url')) };
}

/** The token taken apart when it is well formed and its checksum holds; null otherwise. */
export function parseRefreshToken(token: string): ParsedRefreshToken | null {
  if (token.length !== TOKEN_LENGTH) return null;
  const match = REFRESH_TOKEN.exec(token);
  if (match === null) return null;
  if (checksum(token.slice(0, TOKEN_LENGTH - CHECKSUM_CHARS - 1)) !== match[3]) return null;
  return { familyId: match[1] as string, secret: match[2] as string, token };
}

/**
 * The one successor of a refresh token under its family's successor key
 * (base64url, made by the store with the family): the same for every rotation of it.
 */
export function successorOf(
  presented: ParsedRefreshToken,
  successorKey: string,
): ParsedRefreshToken {
  const secret = createHmac('sha256', Buffer.from(successorKey, 'base64url'))
    .update(`tgr successor ${presented.familyId} ${presented.secret}`)
    .digest('base64url');
  return { familyId: presented.familyId, secret, token: tokenOf(presented.familyId, secret) };
}

/** What the store keeps of a refresh token. */
export const refreshDigest = (token: string): string => secretDigest(token);

function tokenOf(familyId: string, secret: string): string {
  const body = `${REFRESH_TOKEN_PREFIX}${familyId}_${secret}`;
  return `${body}_${checksum(body)}`;
}
