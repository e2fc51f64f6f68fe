/**
 * The browser sign-in driven with fetch (no browser): from the gateway's
 * login URL through an `oidc-provider` IdP's login form (cookies carried by
 * hand) to the gateway's callback, the gateway's binding cookie kept.
 */
import { Agent, fetch as undiciFetch } from 'undici';

export interface StartedSignIn {
  /** The callback URL the IdP sent the browser to (not yet followed). */
  callbackUrl: string;
  /** The gateway's binding cookie, `name=value`. */
  cookie: string;
  /** The gateway's `Set-Cookie` at the login. */
  setCookie: string[];
  /** The IdP's cookies of this browser (`name=value; …`): its session there. */
  idpCookies: string;
}

export async function throughIdp(options: {
  gatewayUrl: string;
  issuer: string;
  agent: Agent;
  start: string;
  account: string;
  alter?: (toIdp: URL) => void;
}): Promise<StartedSignIn> {
  const first = await fetch(options.start, { redirect: 'manual' });
  if (first.status !== 302) throw new Error(`login answered ${first.status}`);
  await first.arrayBuffer();
  const setCookie = first.headers.getSetCookie();
  const toIdp = new URL(first.headers.get('location') as string);
  options.alter?.(toIdp);
  let location = toIdp.href;
  const jar = new Map<string, string>();
  for (let step = 0; step < 8; step++) {
    if (location.startsWith(`${options.gatewayUrl}/1/sso/callback`))
      return {
        callbackUrl: location,
        cookie: (setCookie[0] ?? '').split(';')[0] ?? '',
        setCookie,
        idpCookies: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
      };
    const login = location.includes('/interaction/');
    const res = await undiciFetch(new URL(location, options.issuer), {
      method: login ? 'POST' : 'GET',
      redirect: 'manual',
      dispatcher: options.agent,
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(login ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(login
        ? {
            body: new URLSearchParams({
              prompt: 'login',
              login: options.account,
              password: 'x',
            }).toString(),
          }
        : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0] as string;
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    await res.arrayBuffer();
    location = new URL(res.headers.get('location') as string, options.issuer).href;
  }
  throw new Error(`never reached the callback: ${location}`);
}

/** The callback followed by a browser carrying `cookie`: the gateway's answer, unfollowed. */
export function callback(url: string, cookie: string) {
  return fetch(url, { redirect: 'manual', headers: { cookie } });
}

/** `POST /1/oauth/token` with `grant_type=authorization_code` and `form`. */
export function redeemCode(gatewayUrl: string, form: Record<string, string>) {
  return fetch(`${gatewayUrl}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', ...form }),
  });
}
