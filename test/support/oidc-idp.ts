/**
 * A tenant's identity provider for the federation tests: `oidc-provider` (an
 * OpenID-certified implementation nobody here wrote) over HTTPS, with a
 * certificate from a test CA made with openssl, its own signing keys, and
 * accounts of its own. An ID token is obtained the way a real client gets
 * one: the authorization code flow, driven with fetch through the provider's
 * own login form (`devInteractions`), then the code redeemed at its token
 * endpoint.
 *
 * The provider can rotate its keys while running (a new key signs, the old
 * one is still published) and be stopped and started on the same port.
 *
 * Logouts (issue 44): its RP-initiated logout (`end_session_endpoint`) is on
 * unless `rpInitiatedLogout: false`; back-channel logout is on, and once a
 * client's `backchannel_logout_uri` is set (`setBackchannelLogoutUri`), its
 * ID tokens carry `sid` and ending a session at the provider posts a logout
 * token there (`endSession`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { makeCa, makeSignedCertificate } from './test-certificates.js';

/** A test CA and a server certificate for `localhost` and 127.0.0.1 signed by it. */
export interface TestCa {
  dir: string;
  /** Path of the CA's PEM certificate (what `sso.ca` names). */
  caFile: string;
  ca: string;
  cert: string;
  key: string;
  close(): void;
}

export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'tg-idp-ca-'));
  makeCa(dir, 'ca', '/CN=idp-test-ca');
  makeSignedCertificate(
    dir,
    'server',
    '/CN=localhost',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  );
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    ca: read('ca.pem'),
    cert: read('server.pem'),
    key: read('server.key'),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One person the provider knows. */
export interface IdpAccount {
  email: string;
  emailVerified: boolean;
}

/** A client registered at the provider (the gateway is one; another is for `aud` tests). */
export interface IdpClient {
  clientId: string;
  clientSecret: string;
}

export const REDIRECT_URI = 'https://app.example.test/signed-in';

export interface TestIdp {
  /** `https://localhost:<port>`: what the tenant's IdP record names. */
  issuer: string;
  /** The private signing keys, newest first (the first signs). */
  keys: JWK[];
  /** Requests the provider served, by path (`/jwks`, `/.well-known/openid-configuration`). */
  requests: Map<string, number>;
  /** An ID token for `accountId`, through the login form and the token endpoint. */
  idToken(accountId: string, client?: IdpClient, nonce?: string): Promise<string>;
  /** Accepts `uri` as a redirect URI of every client from now on (a gateway's callback). */
  allowRedirectUri(uri: string): void;
  /**
   * Every client's `backchannel_logout_uri` from now on (with
   * `backchannel_logout_session_required`: ID tokens and logout tokens carry `sid`).
   */
  setBackchannelLogoutUri(uri: string): void;
  /**
   * Ends the provider session of the browser whose provider cookies are
   * `cookies` (`name=value; …`) at its `end_session_endpoint`, confirming as
   * the person would: the provider posts its logout tokens before it answers.
   */
  endSession(cookies: string): Promise<void>;
  /** A new key signs from now on; the old ones are still published. @returns the new kid */
  rotate(): Promise<string>;
  /** Stops listening (connections closed); `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  listening(): boolean;
  close(): Promise<void>;
}

export interface TestIdpOptions {
  ca: TestCa;
  accounts: Record<string, IdpAccount>;
  clients: IdpClient[];
  /** JWS algorithm of its ID tokens: RS256 or ES256. */
  alg: 'RS256' | 'ES256';
  /** `end_session_endpoint` in its discovery document (oidc-provider's default: on). */
  rpInitiatedLogout?: boolean;
}

/** Starts a provider on a free port of 127.0.0.1, named `https://localhost:<port>`. */
export async function startTestIdp(options: TestIdpOptions): Promise<TestIdp> {
  const requests = new Map<string, number>();
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer(
    { cert: options.ca.cert, key: options.ca.key },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://localhost').pathname;
      requests.set(path, (requests.get(path) ?? 0) + 1);
      handle(req, res);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://localhost:${port}`;
  const keys: JWK[] = [await signingKey(options.alg)];
  const redirectUris = [REDIRECT_URI];
  const logout: ClientLogout = {};
  const build = () => {
    const provider = makeProvider(issuer, options, keys, redirectUris, logout);
    handle = provider.callback() as typeof handle;
  };
  build();
  const dispatcher = new Agent({ connect: { ca: options.ca.ca } });
  return {
    issuer,
    keys,
    requests,
    idToken: (accountId, client = options.clients[0] as IdpClient, nonce) =>
      authorizationCodeFlow(issuer, dispatcher, accountId, client, nonce),
    allowRedirectUri(uri) {
      redirectUris.push(uri);
      build();
    },
    setBackchannelLogoutUri(uri) {
      logout.backchannelLogoutUri = uri;
      build();
    },
    endSession: (cookies) => endProviderSession(issuer, dispatcher, cookies),
    async rotate() {
      keys.unshift(await signingKey(options.alg));
      build();
      return keys[0]?.kid as string;
    },
    stop: () => closeServer(server),
    listening: () => server.listening,
    start: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    async close() {
      if (server.listening) await closeServer(server);
      await dispatcher.close();
    },
  };
}

async function signingKey(alg: 'RS256' | 'ES256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return {
    ...jwk,
    kid: `${alg.toLowerCase()}-${Math.random().toString(36).slice(2, 10)}`,
    use: 'sig',
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * oidc-provider's outgoing requests without its SSRF guard: its back-channel
 * logout posts to a gateway on loopback, a special-use address it refuses.
 * (`fetch` is a documented option its typings lack.)
 */
const LOOPBACK_FETCH = {
  fetch: (url: URL | string, options: RequestInit & { dispatcher?: unknown }) => {
    const { dispatcher: _guard, ...rest } = options;
    return fetch(url, rest);
  },
} as unknown as Record<string, never>;

interface ClientLogout {
  backchannelLogoutUri?: string;
}

function makeProvider(
  issuer: string,
  options: TestIdpOptions,
  keys: JWK[],
  redirectUris: string[],
  logout: ClientLogout,
): Provider {
  const backchannel =
    logout.backchannelLogoutUri === undefined
      ? {}
      : {
          backchannel_logout_uri: logout.backchannelLogoutUri,
          backchannel_logout_session_required: true,
        };
  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [...redirectUris],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: options.alg,
      ...backchannel,
    })),
    jwks: { keys: keys.map((k) => ({ ...k, alg: options.alg })) },
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The e-mail claims in the ID token itself, as Google, Okta and Keycloak put them.
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: true },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: { enabled: options.rpInitiatedLogout ?? true },
    },
    ttl: { AccessToken: 600, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    ...LOOPBACK_FETCH,
    async findAccount(_ctx, sub) {
      const account = options.accounts[sub];
      if (account === undefined) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: account.email, email_verified: account.emailVerified }),
      };
    },
    // No consent screen: the grant of `openid email` exists (as for a first-party client).
    async loadExistingGrant(ctx) {
      const session = ctx.oidc.session;
      const client = ctx.oidc.client;
      if (session?.accountId === undefined || client === undefined) return undefined;
      const grant = new ctx.oidc.provider.Grant({
        clientId: client.clientId,
        accountId: session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  return provider;
}

/** The code flow as a browser would run it, cookies carried by hand. */
async function authorizationCodeFlow(
  issuer: string,
  dispatcher: Agent,
  accountId: string,
  client: IdpClient,
  nonce = `n-${Math.random().toString(36).slice(2)}`,
): Promise<string> {
  const jar = new Map<string, string>();
  const go = async (url: string, init: { method?: string; body?: string } = {}) => {
    const res = await undiciFetch(new URL(url, issuer), {
      method: init.method ?? 'GET',
      redirect: 'manual',
      dispatcher,
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(init.body === undefined ? {} : { body: init.body }),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = (pair as string).indexOf('=');
      jar.set((pair as string).slice(0, at), (pair as string).slice(at + 1));
    }
    await res.arrayBuffer();
    if (res.status !== 302 && res.status !== 303)
      throw new Error(`IdP flow: ${url} answered ${res.status}`);
    return res.headers.get('location') as string;
  };
  const authorize = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid email',
    nonce,
  });
  let location = await go(`/auth?${authorize}`);
  for (let step = 0; step < 6 && !location.startsWith(REDIRECT_URI); step++) {
    if (location.includes('/interaction/')) {
      const body = new URLSearchParams({ prompt: 'login', login: accountId, password: 'any' });
      location = await go(location, { method: 'POST', body: body.toString() });
    } else location = await go(location);
  }
  const code = new URL(location).searchParams.get('code');
  if (code === null) throw new Error(`IdP flow ended without a code: ${location}`);
  const res = await undiciFetch(`${issuer}/token`, {
    method: 'POST',
    dispatcher,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
    }).toString(),
  });
  const json = (await res.json()) as { id_token?: string };
  if (res.status !== 200 || json.id_token === undefined)
    throw new Error(`IdP token endpoint: ${res.status} ${JSON.stringify(json)}`);
  return json.id_token;
}

/** oidc-provider's logout confirmation, submitted as the person would (its `xsrf` field read from the page). */
async function endProviderSession(
  issuer: string,
  dispatcher: Agent,
  cookies: string,
): Promise<void> {
  const page = await undiciFetch(`${issuer}/session/end`, {
    dispatcher,
    redirect: 'manual',
    headers: { cookie: cookies },
  });
  const html = await page.text();
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || xsrf === undefined)
    throw new Error(`IdP end_session answered ${page.status} without its form`);
  const confirm = await undiciFetch(`${issuer}/session/end/confirm`, {
    method: 'POST',
    dispatcher,
    redirect: 'manual',
    headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
  });
  await confirm.arrayBuffer();
  if (confirm.status !== 302 && confirm.status !== 303)
    throw new Error(`IdP end_session confirm answered ${confirm.status}`);
}
