/**
 * The small parts every session-cookie entry way shares (issue 44): reading
 * and removing one cookie, the same-origin (CSRF) rule, the Set-Cookie lines.
 */
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { clearedSessionCookie, sessionCookie } from '../../src/http/session-cookie.js';
import { isSafeMethod, isSameOrigin, ownOrigin } from '../../src/http/same-origin.js';
import { cookieValues, withoutCookie } from '../../src/text/cookies.js';

describe('cookieValues', () => {
  it('finds every value of the exact name, in order, across joined lines', () => {
    expect(cookieValues('a=1; s=x; b=2', 's')).toEqual(['x']);
    expect(cookieValues(['s=one', 'b=2; s=two'], 's')).toEqual(['one', 'two']);
    expect(cookieValues('S=x', 's')).toEqual([]);
    expect(cookieValues('S=x', 's', true)).toEqual(['x']);
    expect(cookieValues('s="quoted"', 's')).toEqual(['quoted']);
    expect(cookieValues('s=', 's')).toEqual(['']);
    expect(cookieValues('xs=1; s2=2', 's')).toEqual([]);
    expect(cookieValues(undefined, 's')).toEqual([]);
  });
});

describe('withoutCookie', () => {
  it('drops every spelling of the name, keeps the rest in order, drops an empty header', () => {
    expect(withoutCookie('a=1; __Host-s=x; b=2', '__Host-s')).toBe('a=1; b=2');
    expect(withoutCookie('a=1;__HOST-s=x;b=2', '__Host-s')).toBe('a=1; b=2');
    expect(withoutCookie(['__Host-s=x', '__Host-s=y'], '__Host-s')).toBeUndefined();
    expect(withoutCookie('a=1', '__Host-s')).toBe('a=1');
    expect(withoutCookie('a=__Host-s', '__Host-s')).toBe('a=__Host-s');
    expect(withoutCookie(undefined, '__Host-s')).toBeUndefined();
  });
});

describe('isSameOrigin', () => {
  const own = ownOrigin('https', 'App.Example.com:443');
  it('writes the own origin as a browser writes Origin', () => {
    expect(own).toBe('https://app.example.com');
    expect(ownOrigin('http', 'localhost:8080')).toBe('http://localhost:8080');
    for (const bad of [undefined, '', 'a/b', 'a@b', 'a b', 'a\\b'])
      expect(ownOrigin('http', bad)).toBeUndefined();
  });
  it('takes Sec-Fetch-Site first, same-origin only; else Origin equal to the own one; else refuses', () => {
    expect(isSameOrigin({ 'sec-fetch-site': 'same-origin' }, own)).toBe(true);
    for (const site of ['same-site', 'cross-site', 'none', 'Same-Origin'])
      expect(isSameOrigin({ 'sec-fetch-site': site, origin: own }, own)).toBe(false);
    expect(isSameOrigin({ origin: 'https://app.example.com' }, own)).toBe(true);
    for (const origin of [
      'null',
      'http://app.example.com',
      'https://app.example.com:8443',
      'https://evil.example.com',
    ])
      expect(isSameOrigin({ origin }, own)).toBe(false);
    expect(isSameOrigin({}, own)).toBe(false);
    expect(isSameOrigin({ origin: 'https://app.example.com' }, undefined)).toBe(false);
  });
  it('knows the safe methods', () => {
    expect(['GET', 'HEAD', 'OPTIONS', 'TRACE'].every(isSafeMethod)).toBe(true);
    expect(['POST', 'PUT', 'PATCH', 'DELETE', 'get'].some(isSafeMethod)).toBe(false);
  });
});

describe('the session Set-Cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, no Domain; __Host- and Secure unless secure is off', () => {
    const secure = validateConfig({ sessions: { enabled: true } }, '/', 't').sessions;
    expect(sessionCookie(secure, 'v')).toBe(
      '__Host-tg_session=v; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax; Secure',
    );
    expect(clearedSessionCookie(secure)).toBe(
      '__Host-tg_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
    );
    const trial = validateConfig(
      { sessions: { enabled: true, cookie: { secure: false } } },
      '/',
      't',
    ).sessions;
    expect(sessionCookie(trial, 'v')).toBe(
      'tg_session=v; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax',
    );
  });
  it('refuses a __Host- or __Secure- name without Secure', () => {
    for (const name of ['__Host-x', '__secure-x'])
      expect(() =>
        validateConfig({ sessions: { cookie: { name, secure: false } } }, '/', 't'),
      ).toThrow(/secure: true/);
  });
});
