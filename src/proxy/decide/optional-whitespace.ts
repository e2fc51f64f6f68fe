/**
 * HTTP's optional whitespace (RFC 9110 §5.6.3) is space and tab only.
 * JavaScript's `trim()` also drops U+00A0, U+FEFF, U+2028, `\v` and more: a
 * value the gateway trimmed that way reads as `example.com` while the
 * upstream still receives `\u00a0example.com`. Values that decide a route or
 * a tenant are trimmed of spaces and tabs only, and whatever else surrounds
 * them makes them malformed.
 */
const OWS = /^[ \t]+|[ \t]+$/g;

export function trimOws(value: string): string {
  return value.replace(OWS, '');
}
