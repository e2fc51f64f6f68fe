/**
 * Issue 44: the session cookie as a credential. The one reader
 * (`read-credential.ts`) takes the session cookie from the `Cookie` header(s)
 * where a route takes sessions (RFC 6265 §4.2.1: `name=value` pairs
 * separated by `;` and optional spaces; §5.4: a browser may send several
 * `Cookie` lines, which Node joins with `; `); a bearer token or an API key
 * sent beside it wins and the cookie is not read; two cookies of the
 * session's name (cookie tossing from a sibling host) are refused, never one
 * picked. `createSessionRequestAuthenticator` hands the cookie's value to the
 * browser sessions service — a stand-in here, the collaborator — and
 * everything else to the route authenticator (a stub).
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/credentials/authenticate.js';
import {
  readSessionCookie,
  readSessionCredential,
  soleCookieValue,
  type RequestCredential,
} from '../../src/auth/credentials/read-credential.js';
import { createSessionRequestAuthenticator } from '../../src/auth/credentials/session-credentials.js';
import type { SessionPrincipal } from '../../src/auth/sessions/browser-sessions.js';
import { tokenRefusalOf } from '../../src/auth/tokens/token-refusals.js';
import { GatewayError } from '../../src/errors.js';

const NAME = '__Host-tg_session';
const KEY = `tgk_${'a'.repeat(16)}_${'b'.repeat(43)}`;

/** What the reader answers, or the refusal's code and reason. */
function answer(read: () => RequestCredential | undefined): RequestCredential | string | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return `${err.code} ${tokenRefusalOf(err) ?? ''}`.trim();
  }
}

const session = (value: string): RequestCredential => ({ kind: 'session', value });
const TOSSED = 'invalid_token two_cookies';

/** Cookie header(s) → what the reader reads, with no Authorization and no API key. */
const COOKIES: [string, string | string[] | undefined, RequestCredential | string][] = [
  ['no Cookie', undefined, { kind: 'none' }],
  ['only', `${NAME}=ses_1.abc`, session('ses_1.abc')],
  ['among others, with spaces', `a=1; ${NAME}=ses_1.abc; b=2`, session('ses_1.abc')],
  ['among others, without spaces', `a=1;${NAME}=ses_1.abc;b=2`, session('ses_1.abc')],
  ['quoted (RFC 6265 §4.1.1)', `${NAME}="ses_1.abc"`, session('ses_1.abc')],
  ['two Cookie lines, as an array', ['a=1', `${NAME}=ses_1.abc`], session('ses_1.abc')],
  ['two of its name in one line (tossed)', `${NAME}=ses_1.abc; ${NAME}=ses_2.def`, TOSSED],
  ['two of its name, one per line (tossed)', [`${NAME}=ses_1.abc`, `${NAME}=ses_2.def`], TOSSED],
  ['two, Node-joined lines (tossed)', `${NAME}=ses_1.abc; a=1; ${NAME}=ses_1.abc`, TOSSED],
  ['two, one of them empty (tossed)', `${NAME}=; ${NAME}=ses_1.abc`, TOSSED],
  ['an empty value', `${NAME}=`, { kind: 'none' }],
  ['the name spelled in upper case', `__HOST-tg_session=ses_1.abc`, { kind: 'none' }],
  ['the name spelled in lower case', `__host-tg_session=ses_1.abc`, { kind: 'none' }],
  ['the name without its prefix', `tg_session=ses_1.abc`, { kind: 'none' }],
  ['the name as a prefix of another', `${NAME}x=ses_1.abc`, { kind: 'none' }],
  ['the name as a value', `a=${NAME}`, { kind: 'none' }],
  ['no `=`', `${NAME}`, { kind: 'none' }],
];

describe.each(COOKIES)('a Cookie header: %s', (_name, cookie, expected) => {
  it('is read as one credential, or refused', () => {
    expect(answer(() => readSessionCredential(undefined, undefined, cookie, NAME))).toEqual(
      expected,
    );
  });
});

describe('the steady state, a Cookie of the session cookie alone', () => {
  it('is read by prefix tests, with the answer the full reading gives', () => {
    expect(soleCookieValue(`${NAME}=ses_1.abc`, NAME)).toBe('ses_1.abc');
    for (const [, cookie] of COOKIES) {
      if (typeof cookie !== 'string') continue;
      const sole = soleCookieValue(cookie, NAME);
      if (sole !== undefined) expect(readSessionCookie(cookie, NAME)).toEqual(session(sole));
    }
    for (const other of [`${NAME}=`, `${NAME}="q"`, `${NAME}=a; b=1`, `x${NAME}=a`, `${NAME}x=a`])
      expect(soleCookieValue(other, NAME), other).toBeUndefined();
  });
});

describe('beside another credential', () => {
  const cookie = `${NAME}=ses_1.abc; ${NAME}=ses_2.def`;

  it('a bearer token wins: the cookie is not read, not even two of them', () => {
    expect(answer(() => readSessionCredential('Bearer abc', undefined, cookie, NAME))).toEqual({
      kind: 'bearer',
      token: 'abc',
    });
  });

  it('an API key wins, in Authorization or its header', () => {
    expect(answer(() => readSessionCredential(`Bearer ${KEY}`, undefined, cookie, NAME))).toEqual({
      kind: 'api_key',
      key: KEY,
    });
    expect(answer(() => readSessionCredential(undefined, KEY, cookie, NAME))).toEqual({
      kind: 'api_key',
      key: KEY,
    });
  });

  it('a refused bearer spelling stays refused (the cookie does not rescue it)', () => {
    expect(answer(() => readSessionCredential('Bearer\tabc', undefined, `${NAME}=x`, NAME))).toBe(
      'invalid_token not_bearer',
    );
  });

  it("another scheme (Basic, for the upstream) is not the gateway's: the cookie is read", () => {
    expect(answer(() => readSessionCredential('Basic dTpw', undefined, `${NAME}=x`, NAME))).toEqual(
      session('x'),
    );
    expect(answer(() => readSessionCredential('Basic dTpw', undefined, undefined, NAME))).toEqual({
      kind: 'other',
      scheme: 'Basic',
    });
  });

  it('readSessionCookie alone reads the same', () => {
    expect(readSessionCookie(`a=1; ${NAME}=v`, NAME)).toEqual(session('v'));
    expect(readSessionCookie(undefined, NAME)).toBeUndefined();
    expect(answer(() => readSessionCookie(cookie, NAME))).toBe(TOSSED);
  });
});

const USER = { userId: 'u-alice', email: 'alice@example.com', tenantId: 'acme' };
const BEARER_PRINCIPAL = { ...USER, kind: 'user' } as Principal;
const SESSION_PRINCIPAL = { ...USER, kind: 'session', sessionId: 'ses_1' } as SessionPrincipal;

/** The route authenticator (a stub) and the sessions service (a stand-in), recording their calls. */
function authenticator() {
  const calls: string[] = [];
  const authenticate = (authorization: string | undefined, apiKey: string | undefined) => {
    calls.push(`bearer ${authorization ?? '-'} ${apiKey ?? '-'}`);
    if (authorization === undefined && apiKey === undefined)
      throw new GatewayError('invalid_token', 'A bearer token is required.');
    return BEARER_PRINCIPAL;
  };
  const sessions = {
    principal(value: string) {
      calls.push(`session ${value}`);
      if (value !== 'ses_1.good') throw new GatewayError('invalid_token', 'No such session.');
      return SESSION_PRINCIPAL;
    },
  };
  return { calls, authenticate: createSessionRequestAuthenticator(authenticate, sessions, NAME) };
}

describe('createSessionRequestAuthenticator', () => {
  it('hands the cookie to the sessions and answers with its principal, synchronously', () => {
    const { calls, authenticate } = authenticator();
    expect(authenticate(undefined, undefined, `a=1; ${NAME}=ses_1.good`)).toBe(SESSION_PRINCIPAL);
    expect(calls).toEqual(['session ses_1.good']);
  });

  it('asks only the route authenticator when a bearer or an API key is sent beside it', () => {
    const { calls, authenticate } = authenticator();
    expect(authenticate('Bearer abc', undefined, `${NAME}=ses_1.good`)).toBe(BEARER_PRINCIPAL);
    expect(authenticate(undefined, KEY, `${NAME}=ses_1.good`)).toBe(BEARER_PRINCIPAL);
    expect(calls).toEqual(['bearer Bearer abc -', `bearer - ${KEY}`]);
  });

  it("refuses what the sessions refuse, and without a cookie the route authenticator's refusal", () => {
    const { calls, authenticate } = authenticator();
    expect(() => authenticate(undefined, undefined, `${NAME}=ses_1.forged`)).toThrow(
      'No such session.',
    );
    expect(() => authenticate(undefined, undefined, 'a=1')).toThrow('A bearer token is required.');
    expect(calls).toEqual(['session ses_1.forged', 'bearer - -']);
  });

  it('refuses two session cookies without asking anyone', () => {
    const { calls, authenticate } = authenticator();
    const err = (() => {
      try {
        authenticate(undefined, undefined, `${NAME}=ses_1.good; ${NAME}=ses_1.good`);
      } catch (e) {
        return e as GatewayError;
      }
    })();
    expect(err?.status).toBe(401);
    expect(err && tokenRefusalOf(err)).toBe('two_cookies');
    expect(calls).toEqual([]);
  });
});
