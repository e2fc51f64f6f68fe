/**
 * Talking to the sign-in page (`/1/sign-in`, `/1/sign-out`) as a browser
 * does, over real sockets: the page fetched with its pre-session cookie and
 * form token, forms posted with the cookies and the Fetch Metadata a
 * browser sends. Used by the sign-in suites (HTTP and Chromium).
 */

/** Browser sessions on, over plain HTTP (the cookies without `Secure` and `__Host-`). */
export const SESSIONS = {
  enabled: true,
  cookie: { secure: false },
  returnHosts: ['app.example.test'],
};

/** What a `Set-Cookie` says: its value and attributes as written. */
export function setCookie(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
}

/** `name=value` of a `Set-Cookie`, to send back. */
export function cookiePair(res: Response, name: string): string {
  const line = setCookie(res, name);
  if (line === undefined) throw new Error(`no ${name} cookie set`);
  return line.split(';')[0] as string;
}

/** The value of the hidden field `name` of a page. */
export function hiddenField(html: string, name: string): string | undefined {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  return match?.[1];
}

export interface SignInPage {
  res: Response;
  html: string;
  /** `tg_signin=…` */
  preSession: string;
  token: string;
}

/** GET /1/sign-in with `query` (already encoded). */
export async function openSignIn(base: string, query = ''): Promise<SignInPage> {
  const res = await fetch(`${base}/1/sign-in${query}`, { headers: { accept: 'text/html' } });
  const html = await res.text();
  if (res.status !== 200) throw new Error(`sign-in page: ${res.status} ${html}`);
  return {
    res,
    html,
    preSession: cookiePair(res, 'tg_signin'),
    token: hiddenField(html, 'csrf_token') as string,
  };
}

export interface PostOptions {
  cookie?: string | undefined;
  /** Extra or replaced headers (an empty value removes one); default a same-origin form post of a page asking for HTML. */
  headers?: Record<string, string>;
}

/** POSTs a form to `path` (redirects not followed). */
export function postForm(
  base: string,
  path: string,
  fields: Record<string, string>,
  options: PostOptions = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'sec-fetch-site': 'same-origin',
    ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
    ...options.headers,
  };
  // An empty value: the header left out (a browser without Fetch Metadata).
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
  return fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers,
    body: new URLSearchParams(fields).toString(),
  });
}

/** Opens the page (by default `?return_to=/app`) and posts its form with `fields`, as a person would. */
export async function signIn(
  base: string,
  fields: Record<string, string>,
  options: PostOptions & { query?: string } = {},
): Promise<{ page: SignInPage; res: Response }> {
  const page = await openSignIn(base, options.query ?? '?return_to=%2Fapp');
  // The page's hidden fields go with the post, as a browser sends them.
  const tenantId = hiddenField(page.html, 'tenant_id');
  const cookie = [page.preSession, ...(options.cookie === undefined ? [] : [options.cookie])];
  const res = await postForm(
    base,
    '/1/sign-in',
    {
      csrf_token: page.token,
      return_to: hiddenField(page.html, 'return_to') ?? '/app',
      ...(tenantId === undefined ? {} : { tenant_id: tenantId }),
      ...fields,
    },
    { ...options, cookie: cookie.join('; ') },
  );
  return { page, res };
}
