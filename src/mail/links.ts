/**
 * Every link a mail carries is built here, from `publicUrl` alone — never
 * from a request's `Host` or `X-Forwarded-Host`, which an attacker asking for
 * a mail to a victim could set (host-header poisoning of reset links).
 */

/** `publicUrl` + `path` (an absolute path of the gateway's, query included). */
export function mailedLink(publicUrl: string, path: string): string {
  if (!path.startsWith('/') || path.startsWith('//')) {
    throw new Error(`a mailed link's path must be absolute: ${path}`);
  }
  return new URL(path, publicUrl).href;
}
