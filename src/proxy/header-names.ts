/**
 * Header names as upstream frameworks see them: case-insensitive, and with
 * `_` and `-` folded together (CGI, WSGI, Rack and several proxies map both
 * to one name), so `X_User_Id` counts as `X-User-Id`.
 */
export function foldHeaderName(name: string): string {
  return name.toLowerCase().replace(/_/g, '-');
}
