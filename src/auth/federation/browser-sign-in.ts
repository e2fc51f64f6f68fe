/**
 * The browser sign-in through a tenant's identity provider (issue 34 item 3):
 * the authorization code flow with the provider (OpenID Connect Core §3.1,
 * PKCE S256 per RFC 7636, `state` and `nonce`), and a one-time gateway code
 * handed to the application, which redeems it at `/1/oauth/token`.
 *
 * - `start`: the application's `redirect_uri` must be one of
 *   `sso.redirectUris` exactly (never a redirect to any other), and its PKCE
 *   challenge is required, S256 only (OAuth 2.1; issue 42). The pending
 *   sign-in (tenant, the application's redirect URI, state and PKCE challenge,
 *   the nonce, the PKCE verifier) is kept in the store under a random `state`
 *   for {@link PENDING_TTL_SECONDS}, with the SHA-256 of a random browser
 *   binding the caller sets as a cookie (RFC 9700 §4.7.1: the callback is
 *   accepted only from the browser that started the sign-in, so a callback
 *   URL of the attacker's own sign-in cannot sign a victim in); the browser
 *   goes to the provider.
 * - `finish`: the state is taken (single use) and the binding checked, the provider's code redeemed at
 *   its token endpoint (`client_secret_basic`, the verifier), the ID token
 *   verified as the exchange does plus its `nonce`, the user found, created
 *   or joined as the exchange does; then a gateway code (its SHA-256 the
 *   store key, {@link CODE_TTL_SECONDS}) bound to tenant, user, the
 *   application's redirect URI and PKCE challenge.
 * - `redeem`: the code taken (single use), its redirect URI and verifier
 *   checked (RFC 7636 §4.6: a missing or wrong verifier is `invalid_grant`),
 *   a token granted by the normal path.
 *
 * Session mode (`startSession`, issue 44): the same sign-in, begun by the
 * gateway's own sign-in page for a browser session. There is no application
 * (no redirect URI, no application PKCE: the gateway is the client, and its
 * own PKCE with the provider stays); the pending record keeps the path to
 * return to instead, and `finish` mints no code: it answers the provider's
 * `sub` and `sid` for the session the caller begins.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { Store, TenantIdp, UserRecord } from '../../store/types.js';
import type { Accounts, GrantedToken } from '../accounts.js';
import { isDisabledHash } from '../revocation/disabled.js';
import type { SecretSealer } from './sealed-secrets.js';
import { issuerOf, memberFor, type ExchangeOutcome, type ExchangeSeen } from './exchange.js';
import type { ProviderHttp } from './https-json.js';
import type { IssuerKeys } from './issuer-keys.js';
import type { ProviderDiscovery } from './provider-discovery.js';
import { providerUnavailable, refused } from './refusals.js';
import { verifyIdToken } from './verify-id-token.js';

export const PENDING_TTL_SECONDS = 600;
export const CODE_TTL_SECONDS = 60;
/** RFC 7636 §4.2: a S256 challenge is 43 base64url characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export interface StartInput {
  tenantId: string;
  redirectUri: string;
  appState?: string | undefined;
  /** Required: a S256 challenge (a request without one is refused). */
  codeChallenge?: string | undefined;
  codeChallengeMethod?: string | undefined;
  /** The gateway's callback URL, on the origin the browser addressed. */
  callbackUrl: string;
}

/** A sign-in for a browser session: the path the browser returns to once signed in. */
export interface StartSessionInput {
  tenantId: string;
  /** A path on this gateway's origin, already checked by the caller. */
  returnTo: string;
  /** The gateway's callback URL, on the origin the browser addressed. */
  callbackUrl: string;
}

export interface StartResult {
  /** The provider's authorization URL to redirect the browser to. */
  location: string;
  state: string;
  /** The browser binding, for a cookie the callback must carry. */
  binding: string;
}

export interface FinishInput {
  state: string;
  /** The browser binding the callback carried (its cookie). */
  binding: string | undefined;
  code?: string | undefined;
  /** The provider's `error` (the user cancelled …). */
  error?: string | undefined;
}

export interface FinishResult {
  /** Code mode: the application's redirect URI with `code` (or `error`) and its `state`. */
  location: string;
  /** Which sign-in this was: for the application (a code), or for a browser session. */
  mode: 'code' | 'session';
  /** Undefined when the provider answered an error. */
  signedIn?: {
    tenantId: string;
    userId: string;
    email: string;
    outcome: ExchangeOutcome;
    /** A local user the provider did not create, linked by the record's `linkExisting`. */
    linked: boolean;
    /** The linked user's local password was ended. */
    passwordEnded: boolean;
    idp: TenantIdp;
  };
  /**
   * Session mode: what the caller begins a browser session with (`location` is
   * then its return path). Absent in code mode.
   */
  session?: { returnTo: string; subject: string; sid?: string };
}

export interface RedeemInput {
  code: string;
  redirectUri: string;
  codeVerifier?: string | undefined;
}

export interface BrowserSignIn {
  start(input: StartInput): Promise<StartResult>;
  /** The sign-in in session mode (see the file header). */
  startSession(input: StartSessionInput): Promise<StartResult>;
  /** @param seen filled with what was learnt before a refusal (for the audit). */
  finish(input: FinishInput, seen: ExchangeSeen & { tenantId?: string }): Promise<FinishResult>;
  /**
   * @param grant how the token is issued (a refresh family begun with it, when
   * `tokens.refresh.enabled`); the normal path by default.
   */
  redeem<T extends GrantedToken>(
    input: RedeemInput,
    grant?: (user: UserRecord, tenantId: string) => Promise<T>,
  ): Promise<T | GrantedToken>;
}

export interface BrowserSignInDeps {
  store: Store;
  accounts: Accounts;
  keys: IssuerKeys;
  http: ProviderHttp;
  sealer: SecretSealer | undefined;
  clockSkewSeconds: number;
  /** `sso.redirectUris`. */
  redirectUris: readonly string[];
  /** The provider's checked discovery document (shared with the keys). */
  discovery: ProviderDiscovery;
}

/** Code mode: the application the code goes back to. */
interface PendingApp {
  redirectUri: string;
  appState?: string;
  /** The application's S256 challenge (required since issue 42). */
  appChallenge: string;
}

/** Session mode: where the browser returns (a record without it is code mode). */
interface PendingSession {
  returnTo: string;
}

type PendingSignIn = (PendingApp | PendingSession) & {
  tenantId: string;
  nonce: string;
  verifier: string;
  callbackUrl: string;
  /** SHA-256 of the browser binding. */
  binding: string;
};

interface IssuedCode {
  tenantId: string;
  userId: string;
  redirectUri: string;
  /** Absent only in a code written before PKCE was required: such a code is refused. */
  challenge?: string;
}

interface Endpoints {
  authorization: string;
  token: string;
}

const random = (): string => randomBytes(32).toString('base64url');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');
const invalidRequest = (description: string) => new GatewayError('invalid_request', description);
const invalidGrant = (description: string) => new GatewayError('invalid_grant', description);

export function createBrowserSignIn(deps: BrowserSignInDeps): BrowserSignIn {
  return {
    start: (input) => start(deps, input),
    startSession: (input) =>
      begin(deps, input.tenantId, { returnTo: input.returnTo }, input.callbackUrl),
    finish: (input, seen) => finish(deps, input, seen),
    redeem: (input, grant) => redeem(deps, input, grant ?? deps.accounts.grantToken),
  };
}

async function start(deps: BrowserSignInDeps, input: StartInput): Promise<StartResult> {
  if (!deps.redirectUris.includes(input.redirectUri))
    throw invalidRequest('The redirect_uri is not one registered with the gateway.');
  const { codeChallenge, codeChallengeMethod } = input;
  // OAuth 2.1 §4.1.1, RFC 9700 §2.1.1: PKCE for every sign-in, S256 only (never `plain`, never none).
  if (
    codeChallenge === undefined ||
    codeChallengeMethod !== 'S256' ||
    !CHALLENGE.test(codeChallenge)
  )
    throw invalidRequest(
      'A code_challenge (43 characters) with code_challenge_method=S256 is required.',
    );
  const app: PendingApp = {
    redirectUri: input.redirectUri,
    ...(input.appState === undefined ? {} : { appState: input.appState }),
    appChallenge: codeChallenge,
  };
  return begin(deps, input.tenantId, app, input.callbackUrl);
}

/** Both modes: the pending sign-in stored under a new `state`, the provider's authorization URL. */
async function begin(
  deps: BrowserSignInDeps,
  tenantId: string,
  mode: PendingApp | PendingSession,
  callbackUrl: string,
): Promise<StartResult> {
  const idp = await deps.store.idps.getTenantIdp(tenantId);
  if (idp === null) throw invalidRequest('The tenant has no identity provider.');
  const { authorization } = await endpointsOf(deps, idp.issuer);
  const binding = random();
  const pending: PendingSignIn = {
    ...mode,
    tenantId: idp.tenantId,
    nonce: random(),
    verifier: random(),
    callbackUrl,
    binding: sha256(binding),
  };
  const state = random();
  await deps.store.sso.putSsoRecord('sign-in', state, JSON.stringify(pending), PENDING_TTL_SECONDS);
  const url = new URL(authorization);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: idp.clientId,
    redirect_uri: callbackUrl,
    scope: 'openid email profile',
    state,
    nonce: pending.nonce,
    code_challenge: sha256(pending.verifier),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(name, value);
  return { location: url.href, state, binding };
}

async function finish(
  deps: BrowserSignInDeps,
  input: FinishInput,
  seen: ExchangeSeen & { tenantId?: string },
): Promise<FinishResult> {
  const stored = await deps.store.sso.takeSsoRecord('sign-in', input.state);
  if (stored === null) throw invalidRequest('The sign-in is unknown, used or expired.');
  const pending = JSON.parse(stored) as PendingSignIn;
  if (input.binding === undefined || sha256(input.binding) !== pending.binding)
    throw invalidRequest('The sign-in was started in another browser.');
  seen.tenantId = pending.tenantId;
  if (input.code === undefined) {
    // OpenID Connect Core §3.1.2.6: the provider's error goes back to the application.
    const error = input.error === 'access_denied' ? 'access_denied' : 'server_error';
    return { location: providerErrorLocation(pending, error), mode: modeOf(pending) };
  }
  const idp = await deps.store.idps.getTenantIdp(pending.tenantId);
  if (idp === null) throw refused('no_provider');
  seen.issuer = idp.issuer;
  const idToken = await redeemAtProvider(
    deps,
    await endpointsOf(deps, idp.issuer),
    idp,
    input.code,
    pending,
  );
  // The exchange's header checks too (`alg` asymmetric, not `typ: at+jwt`); `iss` is jose's below.
  issuerOf(idToken);
  let keys;
  try {
    keys = await deps.keys.keysFor(idp.issuer);
  } catch (err) {
    throw providerUnavailable(err);
  }
  const identity = await verifyIdToken(idToken, idp, keys, deps.clockSkewSeconds, seen);
  if (identity.nonce !== pending.nonce) throw refused('nonce');
  const { user, outcome, linked, passwordEnded } = await memberFor(deps, idp, identity.email);
  const signedIn = { tenantId: idp.tenantId, userId: user.id, email: user.email };
  const done = { signedIn: { ...signedIn, outcome, linked, passwordEnded, idp } };
  if ('returnTo' in pending) {
    const { subject, sid } = identity;
    const session = { returnTo: pending.returnTo, subject, ...(sid === undefined ? {} : { sid }) };
    return { location: pending.returnTo, mode: 'session', ...done, session };
  }
  return { location: await issueCode(deps, pending, signedIn), mode: 'code', ...done };
}

const modeOf = (pending: PendingSignIn): FinishResult['mode'] =>
  'returnTo' in pending ? 'session' : 'code';

/** Code mode: the one-time gateway code, and the application's URL carrying it. */
async function issueCode(
  deps: BrowserSignInDeps,
  app: PendingApp,
  signedIn: { tenantId: string; userId: string },
): Promise<string> {
  const code = random();
  const issued: IssuedCode = {
    tenantId: signedIn.tenantId,
    userId: signedIn.userId,
    redirectUri: app.redirectUri,
    challenge: app.appChallenge,
  };
  await deps.store.sso.putSsoRecord('code', sha256(code), JSON.stringify(issued), CODE_TTL_SECONDS);
  const back = appUrl(app);
  back.searchParams.set('code', code);
  return back.href;
}

function appUrl(app: PendingApp): URL {
  const back = new URL(app.redirectUri);
  if (app.appState !== undefined) back.searchParams.set('state', app.appState);
  return back;
}

/**
 * Where the provider's error goes: the application (code mode); the sign-in
 * page with the path to return to (session mode), which shows it.
 */
function providerErrorLocation(pending: PendingSignIn, error: string): string {
  if ('returnTo' in pending) {
    const page = error === 'access_denied' ? 'company_sign_in_cancelled' : 'company_sign_in_failed';
    return `/1/sign-in?${new URLSearchParams({ return_to: pending.returnTo, error: page })}`;
  }
  const back = appUrl(pending);
  back.searchParams.set('error', error);
  return back.href;
}

/** The provider's code for its ID token: `client_secret_basic` and the PKCE verifier. */
async function redeemAtProvider(
  deps: BrowserSignInDeps,
  endpoints: Endpoints,
  idp: TenantIdp,
  code: string,
  pending: PendingSignIn,
): Promise<string> {
  const secret =
    idp.clientSecretSealed === undefined || deps.sealer === undefined
      ? ''
      : deps.sealer.open(idp.clientSecretSealed, idp.tenantId);
  // RFC 6749 §2.3.1: id and secret each form-urlencoded.
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
  const basic = Buffer.from(`${encode(idp.clientId)}:${encode(secret)}`).toString('base64');
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.callbackUrl,
    code_verifier: pending.verifier,
  });
  let answer;
  try {
    answer = await deps.http.postForm(endpoints.token, form, `Basic ${basic}`);
  } catch (err) {
    throw providerUnavailable(err);
  }
  if (answer.status >= 500)
    throw providerUnavailable(new Error(`token endpoint: ${answer.status}`));
  const idToken = (answer.json as { id_token?: unknown } | undefined)?.id_token;
  if (answer.status !== 200 || typeof idToken !== 'string') throw refused('code_refused');
  return idToken;
}

async function redeem<T extends GrantedToken>(
  deps: BrowserSignInDeps,
  input: RedeemInput,
  grant: (user: UserRecord, tenantId: string) => Promise<T>,
): Promise<T> {
  const stored = await deps.store.sso.takeSsoRecord('code', sha256(input.code));
  if (stored === null) throw invalidGrant('The code is unknown, used or expired.');
  const issued = JSON.parse(stored) as IssuedCode;
  if (issued.redirectUri !== input.redirectUri)
    throw invalidGrant('The redirect_uri is not the one the code was issued for.');
  const verifier = input.codeVerifier;
  // RFC 7636 §4.6: a verifier that does not match (a missing one included) is `invalid_grant`.
  if (
    issued.challenge === undefined ||
    verifier === undefined ||
    !VERIFIER.test(verifier) ||
    sha256(verifier) !== issued.challenge
  )
    throw invalidGrant('The code_verifier does not match the code_challenge.');
  const user = await deps.store.users.getUser(issued.userId);
  if (user === null || isDisabledHash(user.passwordHash))
    throw invalidGrant('The user can no longer sign in.');
  try {
    return await grant(user, issued.tenantId);
  } catch (err) {
    if (err instanceof GatewayError && err.status < 500)
      throw invalidGrant('The user is no longer a member of the tenant.');
    throw err;
  }
}

/** The provider's authorization and token endpoints (its checked discovery document). */
async function endpointsOf(deps: BrowserSignInDeps, issuer: string): Promise<Endpoints> {
  let found;
  try {
    found = await deps.discovery.endpointsOf(issuer);
  } catch (err) {
    throw providerUnavailable(err);
  }
  const { authorization, token } = found;
  if (authorization === undefined || token === undefined)
    throw providerUnavailable(new Error('discovery: no authorization_endpoint or token_endpoint'));
  return { authorization, token };
}
