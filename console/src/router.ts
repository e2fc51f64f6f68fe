/**
 * The console's pages by path, and moving between them without a reload
 * (the History API). Deep links are real URLs: the gateway serves the same
 * shell for each, and this reads which page it is.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'home' }
  | { page: 'account' }
  | { page: 'members' | 'clients' | 'idp' | 'audit'; tenantId: string }
  | { page: 'unknown' };

const TENANT_PAGE = /^\/console\/tenants\/([^/]+)\/(members|clients|idp|audit)\/?$/;

export function routeOf(path: string): Route {
  if (path === '/console' || path === '/console/') return { page: 'home' };
  if (path === '/console/account' || path === '/console/account/') return { page: 'account' };
  const match = TENANT_PAGE.exec(path);
  if (match !== null) {
    return {
      page: match[2] as 'members' | 'clients' | 'idp' | 'audit',
      tenantId: decodeURIComponent(match[1] as string),
    };
  }
  return { page: 'unknown' };
}

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const listener of listeners) listener();
  document.getElementById('main')?.focus();
}

/** The current path; the page draws again when it changes. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** A console link: a real `href` (opens in a new tab too), followed without a reload. */
export function follow(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  event.preventDefault();
  navigate(anchor.pathname);
}

export const tenantPath = (tenantId: string, page: string) =>
  `/console/tenants/${encodeURIComponent(tenantId)}/${page}`;
